//! Automatic metrics: one file per metric family, plus the `Scorer`s that feed them from the
//! store.
//!
//! | module | what |
//! |---|---|
//! | `style_data` | which store texts train and test a dataset's style models |
//! | `style_classifier` | training, cross-validation, files and manifests of style classifiers |
//! | `acc` | ACC scorer (target-style share) with per-output details |
//! | `dppl` | d-PPL: per-style KN LMs, their files, the scorer |

pub mod acc;
pub mod dppl;
pub mod style_classifier;
pub mod style_data;

#[cfg(test)]
mod style_tests;
