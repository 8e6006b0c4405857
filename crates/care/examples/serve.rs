//! Runs the care service the way `slipway care serve` will, for trying it by hand and for
//! `scripts/care-schemathesis.sh` before the CLI is wired:
//! `cargo run -p slipway-care --example serve -- 127.0.0.1:8080 [DATABASE_URL] [--demo]`.

use std::net::SocketAddr;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let mut args = std::env::args().skip(1);
    let listen: SocketAddr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:8080".into())
        .parse()?;
    let mut config = slipway_care::CareConfig::new(listen);
    config.data_dir = std::env::temp_dir().join("slipway-care-example");
    for arg in args {
        match arg.as_str() {
            "--demo" => config.demo = true,
            url => config.database_url = Some(url.to_owned()),
        }
    }
    slipway_care::serve(config).await?;
    Ok(())
}
