//! One call from a spec to a finished (or cancelled) run: load the model and the templates,
//! prepare, execute. The CLI and the TUI's background job both use it.

use super::library::Library;
use super::run::{self, Outcome, RunProgress, Spec};
use super::{Result, TransferError};
use crate::endpoint::{Backend, Client};
use crate::models::{Generator, default_model_path, registry};
use std::sync::Arc;
use crate::store::Store;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// A model given by name (`tstlab models list`) or path; none: the default model.
pub fn resolve_model(model: Option<&str>) -> PathBuf {
    match model {
        None | Some("") => default_model_path(),
        Some(name) if registry::find(name).is_some() => registry::installed_path(name),
        Some(path) => PathBuf::from(path),
    }
}

/// What a launch is about to do, before the first output lands.
#[derive(Debug, Clone)]
pub struct Started {
    pub run_id: i64,
    pub system: String,
    pub total: usize,
    pub already: usize,
    pub resumed: bool,
    pub device: String,
}

/// The backend of `spec`: the local model loaded, or a client of its server. With `check`, a
/// server is asked once (`GET /models`) whether it answers and serves the model.
pub fn backend(spec: &Spec, check: bool, cancel: &AtomicBool) -> Result<Backend> {
    if let Some(settings) = &spec.endpoint {
        let client = Client::new(settings.clone())?;
        if check {
            client.check_model(&|| cancel.load(std::sync::atomic::Ordering::Relaxed))?;
        }
        return Ok(Backend::Endpoint(Arc::new(client)));
    }
    let generator = Generator::load(&spec.model).map_err(|e| match e {
        crate::models::ModelError::NotFound(p) => {
            TransferError::Invalid(format!("{}: model not found (install it with `tstlab models install`)", p.display()))
        }
        e => e.into(),
    })?;
    Ok(Backend::Local(Arc::new(generator)))
}

/// Loads the model (or checks the server), prepares the run of `spec` and generates its
/// missing outputs.
pub fn run_spec(
    store: &mut Store,
    spec: &Spec,
    cancel: &AtomicBool,
    started: &mut dyn FnMut(&Started),
    progress: &mut dyn FnMut(&RunProgress),
) -> Result<Outcome> {
    let generator = backend(spec, true, cancel)?;
    let lib = Library::load();
    let launch = run::prepare(store, &generator, spec, &lib)?;
    started(&Started {
        run_id: launch.run_id,
        system: launch.system.clone(),
        total: launch.total,
        already: launch.already,
        resumed: launch.resumed,
        device: launch.manifest.device.clone(),
    });
    run::execute(store, &generator, launch, cancel, progress)
}
