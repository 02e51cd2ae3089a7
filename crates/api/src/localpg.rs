//! A project-local PostgreSQL cluster for `make run` on machines where none is running: data
//! under `.data/postgres`, listening only on a Unix socket in the same directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

/// The directory holding `initdb` and `pg_ctl`, if the system has PostgreSQL server binaries.
pub fn server_binaries() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file() && bin.join("pg_ctl").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

/// PostgreSQL refuses to run as root; as root we run its tools as the `postgres` user.
fn pg_command(bin: &Path, tool: &str) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    }
}

/// Initialises (once) and starts the cluster; returns its connection URL.
pub fn start(dir: &Path) -> anyhow::Result<String> {
    let bin = server_binaries().context("no PostgreSQL server binaries (initdb, pg_ctl) found")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = dir.canonicalize()?;
    if is_root() {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir)
            .status()?;
        anyhow::ensure!(
            status.success(),
            "could not give {} to the postgres user",
            dir.display()
        );
    }
    if !dir.join("PG_VERSION").exists() {
        let out = pg_command(&bin, "initdb")
            .args([
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "-D",
            ])
            .arg(&dir)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let running = pg_command(&bin, "pg_ctl")
        .arg("status")
        .arg("-D")
        .arg(&dir)
        .output()?
        .status
        .success();
    if !running {
        let socket = dir.display().to_string();
        let out = pg_command(&bin, "pg_ctl")
            .arg("start")
            .arg("-w")
            .arg("-D")
            .arg(&dir)
            .arg("-l")
            .arg(dir.join("server.log"))
            .arg("-o")
            .arg(format!("-k {socket} -c listen_addresses=''"))
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "pg_ctl start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(format!(
        "postgres://postgres@localhost/teamcomm?host={}",
        dir.display()
    ))
}
