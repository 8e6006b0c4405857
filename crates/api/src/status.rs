//! Lifecycle states, each with the one spelling it is stored and shown with.

/// Defines an enum whose every variant has one spelling, written once next to it: the stored
/// and the displayed (serialised) form. Gives `ALL`, `as_str`, `parse`, `Display`, serde both
/// ways (reading an unknown spelling is an error naming the known ones) and a JSON Schema
/// listing the spellings.
macro_rules! spelled_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $spelling:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($spelling),+].len()] = [$($name::$variant),+];

            /// The stored (and displayed) spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $spelling, )+
                }
            }

            /// The value a stored spelling stands for.
            pub fn parse(raw: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|s| s.as_str() == raw)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                Self::parse(&raw).ok_or_else(|| {
                    serde::de::Error::unknown_variant(&raw, &[$($spelling),+])
                })
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "enum": [$($spelling),+] })
            }
        }
    };
}

spelled_enum! {
    /// Lifecycle state of an app. The spec names `deploying`, `RUNNING`, `FAILED` and
    /// `suspended` (with its spelling); `registered` is the state of an app that has a name,
    /// principal and access control but has never been built.
    pub enum AppStatus {
        /// Registered, never built or deployed.
        Registered = "registered",
        /// A deployment is starting.
        Deploying = "deploying",
        /// Every service answers its health check.
        Running = "RUNNING",
        /// A service exits repeatedly or never became healthy.
        Failed = "FAILED",
        /// Disabled: processes stopped, app kept.
        Suspended = "suspended",
    }
}

impl AppStatus {
    /// True when waiting does not change the status: a deployment ended (RUNNING or FAILED),
    /// or the app is suspended until someone enables it. `slipway status --watch` stops here,
    /// as the desktop's status watch does (`ui/js/watch-status.js`, `SETTLED`).
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            AppStatus::Running | AppStatus::Failed | AppStatus::Suspended
        )
    }
}

spelled_enum! {
    /// Where a build job is in its life.
    pub enum BuildStatus {
        /// Waiting for a free build slot.
        Queued = "queued",
        /// Running.
        InProgress = "in_progress",
        /// Finished with an image.
        Succeeded = "succeeded",
        /// Finished without an image; `error` says why.
        Failed = "failed",
        /// Stopped by a cancel request.
        Cancelled = "cancelled",
    }
}

impl BuildStatus {
    /// True once the job can no longer change.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            BuildStatus::Succeeded | BuildStatus::Failed | BuildStatus::Cancelled
        )
    }
}

spelled_enum! {
    /// Status of a deployment.
    pub enum DeploymentStatus {
        /// Starting its services.
        Deploying = "deploying",
        /// Every service healthy; serving.
        Running = "RUNNING",
        /// Never became healthy; `reason` says why.
        Failed = "FAILED",
        /// Stopped by a disable or a delete.
        Stopped = "stopped",
        /// Replaced by a newer healthy deployment.
        Superseded = "superseded",
    }
}

spelled_enum! {
    /// Why a deployment was started.
    pub enum DeploymentCause {
        /// A build of the app succeeded.
        Build = "build",
        /// The app was enabled again.
        Enable = "enable",
        /// A user went back to an earlier deployment.
        Rollback = "rollback",
        /// The server restarted and brought back what ran.
        Restart = "restart",
        /// A backing resource's credentials were rotated: the app restarts on the new ones.
        Rotate = "rotate",
    }
}

spelled_enum! {
    /// Status of one service of a deployment.
    pub enum ServiceStatus {
        /// Not started yet (waiting for its dependencies).
        Pending = "pending",
        /// Started, not yet healthy.
        Starting = "starting",
        /// Answered its health check.
        Healthy = "healthy",
        /// Exited repeatedly or never became healthy.
        Failed = "failed",
        /// Stopped.
        Stopped = "stopped",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_spelling() {
        for s in DeploymentStatus::ALL {
            assert_eq!(DeploymentStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in ServiceStatus::ALL {
            assert_eq!(ServiceStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in AppStatus::ALL {
            assert_eq!(AppStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in BuildStatus::ALL {
            assert_eq!(BuildStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for s in DeploymentCause::ALL {
            assert_eq!(DeploymentCause::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(serde_json::to_value(AppStatus::Running).unwrap(), "RUNNING");
        assert_eq!(
            serde_json::to_value(BuildStatus::InProgress).unwrap(),
            "in_progress"
        );
        assert_eq!(DeploymentStatus::parse("running"), None);
    }

    #[test]
    fn a_status_reads_back_from_json_and_an_unknown_one_is_named() {
        let read: AppStatus = serde_json::from_str("\"suspended\"").unwrap();
        assert_eq!(read, AppStatus::Suspended);
        let err = serde_json::from_str::<AppStatus>("\"running\"").unwrap_err();
        assert!(err.to_string().contains("RUNNING"), "{err}");
        let schema = serde_json::to_value(schemars::schema_for!(BuildStatus)).unwrap();
        assert_eq!(
            schema["enum"],
            serde_json::json!(["queued", "in_progress", "succeeded", "failed", "cancelled"])
        );
        let settled: Vec<AppStatus> = AppStatus::ALL
            .into_iter()
            .filter(|s| s.is_settled())
            .collect();
        assert_eq!(
            settled,
            [AppStatus::Running, AppStatus::Failed, AppStatus::Suspended]
        );
    }
}
