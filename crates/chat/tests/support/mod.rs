//! Test support shared by the adapter's test binaries.

pub mod synapse;
