//! Logs: build logs (`DATA_DIR/builds/<build_id>/log`) and runtime logs
//! (`DATA_DIR/deployments/<deployment_id>/<service>.log`) are served through presigned URLs
//! ([`presign`]) that need no token, so a log can be handed to a browser or another tool.

pub mod follow;
pub mod presign;
