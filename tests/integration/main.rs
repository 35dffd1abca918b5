//! Every integration test, linked into one test binary.
//!
//! One binary instead of one per file: each links polars, and on a small CI
//! machine nine copies of that link step cost minutes and gigabytes of disk
//! (a full disk once killed the linker with SIGBUS). Run one group with a
//! filter, e.g. `cargo test --test integration import::`.

mod common;

mod architecture;
mod archive_integrity;
mod backends;
mod bundle;
mod changepoints;
mod cli;
mod compare;
mod container;
mod end_to_end;
mod exec;
#[cfg(feature = "cuda")]
mod fake_cuda;
mod gate;
mod golden;
#[cfg(feature = "cuda")]
mod gpu_health;
mod gpu_truth;
mod history;
mod import;
mod import_corpus;
mod import_layouts;
mod import_workload;
mod interop;
mod interrupted_run;
#[cfg(feature = "mpi")]
mod mpi;
#[allow(dead_code)]
mod object_store;
mod ops;
mod partitions;
mod report_model;
mod report_numbers;
mod report_safety;
mod sentences;
mod series;
mod site;
mod slurm;
