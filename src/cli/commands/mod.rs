//! One file per command. Each returns a value that serializes (its JSON
//! form) and renders (its text form, see [`super::print::Render`]); the
//! dispatch in [`super::main_with`] prints it and picks the exit code.

pub mod backends;
pub mod bundle;
pub mod compare;
pub mod fleet;
pub mod gate;
pub mod health;
pub mod history;
pub mod import;
pub mod list;
pub mod report;
pub mod rerun;
pub mod run;
pub mod show;
pub mod site;
pub mod specs;
pub mod sync;
pub mod textfile;
pub mod verify;
