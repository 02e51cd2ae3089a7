//! `embed_migrations!` reads `migrations/` at compile time, and a proc macro cannot tell cargo to
//! watch a directory: without this, adding a migration would not rebuild this crate, and the
//! binary would silently lack it (diesel_migrations' documented remedy).
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    // Declaring one rerun rule turns off the default ones: keep the manifest.
    println!("cargo:rerun-if-changed=Cargo.toml");
}
