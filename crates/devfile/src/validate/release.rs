//! The devfile 2.x releases Slipway knows, each with the limits that changed between releases,
//! so a document is checked against the rules of the `schemaVersion` it declares.

/// A released devfile schema version and the limits it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The version, as `schemaVersion` writes it.
    pub version: &'static str,
    /// Longest endpoint name: 63 (a DNS label) in 2.0.0 and 2.1.0; 2.2.0 shortened it to 15,
    /// the Kubernetes limit for a container port name, which the endpoint name becomes.
    pub endpoint_name_max: usize,
}

/// Endpoint-name limit of the releases before 2.2.0.
const DNS_LABEL_MAX: usize = 63;
/// Endpoint-name limit from 2.2.0 on.
const PORT_NAME_MAX: usize = 15;

/// Every 2.x release from 2.0.0 to 2.3.0, oldest first.
pub const RELEASES: [Release; 6] = [
    Release {
        version: "2.0.0",
        endpoint_name_max: DNS_LABEL_MAX,
    },
    Release {
        version: "2.1.0",
        endpoint_name_max: DNS_LABEL_MAX,
    },
    Release {
        version: "2.2.0",
        endpoint_name_max: PORT_NAME_MAX,
    },
    Release {
        version: "2.2.1",
        endpoint_name_max: PORT_NAME_MAX,
    },
    Release {
        version: "2.2.2",
        endpoint_name_max: PORT_NAME_MAX,
    },
    Release {
        version: "2.3.0",
        endpoint_name_max: PORT_NAME_MAX,
    },
];

/// The newest release: how a document with another 2.x version (or with no usable
/// `schemaVersion`) is read.
pub const LATEST: Release = RELEASES[RELEASES.len() - 1];

/// The released devfile schema versions Slipway knows: every 2.x release from 2.0.0 to 2.3.0.
/// Another `2.x.y` is accepted with a warning (2.x releases are backward compatible) and read as
/// [`LATEST`]; any other major version is an error.
pub const SUPPORTED_SCHEMA_VERSIONS: [&str; RELEASES.len()] = {
    let mut versions = [""; RELEASES.len()];
    let mut i = 0;
    while i < RELEASES.len() {
        versions[i] = RELEASES[i].version;
        i += 1;
    }
    versions
};

impl Release {
    /// The release `version` names, if Slipway knows it.
    pub fn find(version: &str) -> Option<Self> {
        RELEASES.into_iter().find(|r| r.version == version)
    }
}

impl Default for Release {
    /// A document is read as the newest release until its `schemaVersion` says otherwise.
    fn default() -> Self {
        LATEST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_names_shortened_in_2_2() {
        let limit = |v: &str| Release::find(v).map(|r| r.endpoint_name_max);
        assert_eq!(limit("2.0.0"), Some(63));
        assert_eq!(limit("2.1.0"), Some(63));
        assert_eq!(limit("2.2.0"), Some(15));
        assert_eq!(limit("2.3.0"), Some(15));
        assert_eq!(limit("2.4.0"), None);
        assert_eq!(Release::default(), LATEST);
        assert_eq!(SUPPORTED_SCHEMA_VERSIONS[0], "2.0.0");
        assert_eq!(SUPPORTED_SCHEMA_VERSIONS[5], "2.3.0");
    }
}
