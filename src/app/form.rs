//! What the Test screen's keys do beyond moving (component: `screens/test.rs`): stepping and
//! typing a parameter, checked against the selected device, and starting the test. The fields
//! and values are `picker`'s.

use super::picker::Field;
use super::{App, Overlay};
use crate::bench::catalog::build::build_plan;
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::TargetFacts;
use crate::event::Cmd;

impl App {
    /// A typed value, checked now against the selected device: a refused value is not kept
    /// and the dialog says why.
    pub(super) fn set_typed(&mut self, field: Field, text: String) {
        let before = self.values.clone();
        let checked = self
            .values
            .set_typed(field, &text)
            .and_then(|()| self.check_values());
        if let Err(e) = checked {
            self.values = before;
            self.overlay = Some(Overlay::Edit(super::dialogs::edit::Edit {
                field,
                text,
                error: Some(e),
            }));
        }
    }

    /// Would the form's values make a valid plan on the selected device? If not, the reason
    /// the run would be refused with.
    fn check_values(&self) -> Result<(), String> {
        let Some(d) = self.selected_device() else {
            return Ok(());
        };
        let test = self.picker_test();
        let facts = match &self.file_target {
            // The new file is as large as the region (by default, what fits the free space).
            Some(ft) => TargetFacts {
                size: self.values.params(test).size.unwrap_or(
                    crate::bench::exec::test_file::default_file_size_within(ft.free),
                ),
                logical_block_size: d.logical_block_size.unwrap_or(4096),
                max_request: None,
                is_file: true,
            },
            None => {
                let Some(size) = d.size_bytes.map(|b| b.0).filter(|&b| b > 0) else {
                    return Ok(());
                };
                TargetFacts {
                    size,
                    logical_block_size: d.logical_block_size.unwrap_or(512),
                    max_request: None,
                    is_file: false,
                }
            }
        };
        build_plan(test, &self.values.params(test), &facts, true)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Steps a field to its next choice the selected device can take (a region larger than
    /// the device is skipped, say).
    pub(in crate::app) fn step_valid(&mut self, field: Field, dir: i32) {
        let start = self.values.clone();
        for _ in 0..32 {
            self.values.step(field, dir);
            if self.values == start || self.check_values().is_ok() {
                return;
            }
        }
        self.values = start;
    }

    pub(in crate::app) fn start_from_picker(&mut self) -> Vec<Cmd> {
        if self.running() {
            self.error("a test is running (x stops it)");
            return Vec::new();
        }
        if let Some(ft) = &self.file_target {
            let test = self.picker_test();
            let mut params = self.values.params(test);
            let directory = test.info().family.runs_in_directory();
            // Unless set, the file is the size the dialog offered, which fits the free space.
            let size =
                params
                    .size
                    .unwrap_or(crate::bench::exec::test_file::default_file_size_within(
                        ft.free,
                    ));
            if !directory {
                params.size = Some(size);
            }
            if !directory && size > ft.free {
                let msg = format!(
                    "a {} test file does not fit in the {} free on {}: set a smaller region size",
                    crate::model::Bytes(size).iec(),
                    crate::model::Bytes(ft.free).iec(),
                    ft.mount.display()
                );
                self.error(msg);
                return Vec::new();
            }
            let request = RunRequest {
                target: if directory {
                    ft.mount.clone()
                } else {
                    ft.file.clone()
                },
                test,
                params,
                confirmation: None,
                temperature: self.values.temperature(),
                device: None,
            };
            return self.launch(request, self.values.repeats.max(1));
        }
        let Some(dev) = self.several_first().or_else(|| self.selected_device()) else {
            self.error(self.no_selection());
            return Vec::new();
        };
        if dev.size_bytes.is_none_or(|b| b.0 == 0) {
            self.error(format!("{} has no size: nothing to test", dev.name));
            return Vec::new();
        }
        let test = self.picker_test();
        let request = RunRequest {
            target: dev.path.clone(),
            test,
            params: self.values.params(test),
            confirmation: None,
            temperature: self.values.temperature(),
            device: None,
        };
        if self.several.marks.len() >= 2 {
            return self.launch_several(request, self.values.repeats.max(1));
        }
        self.launch(request, self.values.repeats.max(1))
    }
}
