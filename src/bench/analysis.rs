//! What is made of results after a run, the top floor of `bench`: comparison against the noise
//! (`compare`), figures over repeats (`figures`), a sweep's curves (`curve`), verdicts over
//! several disks (`several_disks`) and setting sweeps (`setting_sweep`).

pub mod compare;
pub mod curve;
pub mod figures;
pub mod setting_sweep;
pub mod several_disks;
