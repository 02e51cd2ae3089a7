//! The `teamcomm` binary: `serve` (the default), `migrate`, and `admin …`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mimalloc::MiMalloc;
use teamcomm_api::admin::AdminCommand;
use teamcomm_api::{AppState, Settings, server, telemetry};

/// mimalloc instead of the system allocator: request handling allocates many small, short-lived
/// buffers, and glibc's malloc spent a fifth of the CPU of a directory listing (docs/performance.md).
#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "teamcomm",
    version,
    about = "Self-hostable team-communication API"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP server.
    Serve {
        /// On an empty database, provision a demo organization and print its admin's API key.
        #[arg(long)]
        demo: bool,
        /// When nothing answers at the default DATABASE_URL, start a project-local PostgreSQL
        /// cluster in this directory (needs initdb/pg_ctl).
        #[arg(long)]
        local_pg_dir: Option<PathBuf>,
    },
    /// Create the database if missing, apply pending migrations and exit.
    Migrate,
    /// Provision organizations, people and credentials directly in the database (prints JSON).
    #[command(subcommand)]
    Admin(AdminCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve {
        demo: false,
        local_pg_dir: None,
    });
    let demo = match &command {
        Command::Serve { demo, .. } => *demo,
        Command::Migrate => true,
        Command::Admin(cmd) => !cmd.needs_jwt_secret(),
    };
    let settings = match Settings::from_env(demo) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("teamcomm: {e}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(settings.log_format);
    settings.warn_about_unknown_variables();
    let result = actix_web::rt::System::new().block_on(run(command, settings));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("teamcomm: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, mut settings: Settings) -> anyhow::Result<()> {
    match command {
        Command::Serve { demo, local_pg_dir } => {
            server::serve(settings, demo, local_pg_dir.as_deref()).await
        }
        Command::Migrate => {
            server::prepare_database(&mut settings, None).await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Admin(cmd) => {
            let db = server::prepare_database(&mut settings, None).await?;
            let state = AppState::new(db, settings);
            let out = cmd
                .run(&state)
                .await
                .map_err(|e| anyhow::anyhow!("{} ({})", e.detail(), e.code()))?;
            println!("{out}");
            Ok(())
        }
    }
}
