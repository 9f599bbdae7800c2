//! One call from a spec to a finished (or cancelled) run: load the model and the templates,
//! prepare, execute; and where a spec generates ([`apply`]: the user's choices over the
//! template's run settings). The CLI and the TUI's launch form and job all use them.

use super::library::Library;
use super::manifest::Decoding;
use super::run::{self, Outcome, RunProgress, Spec};
use super::template::Template;
use super::{Result, TransferError};
use crate::endpoint::{Backend, Client, Settings};
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

/// Where a run generates and how it samples, as the user gave them (`tstlab transfer`'s options,
/// the TUI's launch form); what is not given comes from the template's run settings.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// An OpenAI-compatible server's address.
    pub endpoint: Option<String>,
    /// With `endpoint`, the model name the server knows; else an installed model or a file.
    pub model: Option<String>,
    /// Concurrency, timeout and retries of a server (its address and model come from above).
    pub server: Settings,
    pub max_new: Option<usize>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub seed: Option<u64>,
}

/// Sets where `spec` generates (`model`, `endpoint`) and its sampling: `given` wins; an
/// endpoint or a model given replaces both of the template's (a model alone is a local model);
/// each sampling option replaces its key. The batch size stays as it is in `spec`.
pub fn apply(spec: &mut Spec, template: &Template, given: &Given) -> Result<()> {
    let t = &template.run;
    let from_given = given.endpoint.is_some() || given.model.is_some();
    let (endpoint, model) = if from_given { (&given.endpoint, &given.model) } else { (&t.endpoint, &t.model) };
    match endpoint {
        Some(url) => {
            let model = model.as_deref().filter(|m| !m.trim().is_empty()).ok_or_else(|| {
                TransferError::Invalid(match from_given {
                    true => "an endpoint needs the model name the server knows (--model NAME)".to_owned(),
                    false => format!("template {} names an endpoint but no `model:` (the model name the server knows)", template.name),
                })
            })?;
            let settings = Settings { url: url.trim().to_owned(), model: model.trim().to_owned(), ..given.server.clone() };
            settings.check()?;
            spec.model = settings.model.clone().into();
            spec.endpoint = Some(settings);
        }
        None => {
            spec.model = resolve_model(model.as_deref());
            spec.endpoint = None;
        }
    }
    let d = Decoding::default();
    spec.decoding = Decoding {
        max_new_tokens: given.max_new.or(t.max_new).unwrap_or(d.max_new_tokens),
        temperature: given.temperature.or(t.temperature).unwrap_or(d.temperature),
        top_p: given.top_p.or(t.top_p).unwrap_or(d.top_p),
        seed: given.seed.or(t.seed).unwrap_or(d.seed),
        batch_size: spec.decoding.batch_size.max(1),
        ..d
    };
    Ok(())
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
