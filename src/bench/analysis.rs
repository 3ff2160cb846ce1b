//! What is made of results after a run: run-to-run comparison against the noise
//! (`compare`), figures over repeats (`figures`), curves over a sweep's phases (`curve`), the
//! verdicts of a run on several disks (`several_disks`) and setting sweeps (`setting_sweep`:
//! which scheduler or cache setting is faster). The top floor of `bench`.

pub mod compare;
pub mod curve;
pub mod figures;
pub mod setting_sweep;
pub mod several_disks;
