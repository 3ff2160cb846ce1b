//! The TUI's one job runner: starts any `flow::job::Job` on a thread of its own, hands what
//! it says to the main loop as the screen's messages (`Msg`, through the job's `Into<Msg>`),
//! and stops every job the same way: one flag each, set on the stop key, on leaving, on quit
//! and on a signal, then waited for up to the longest `Job::stop_wait`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::event::Msg;
use crate::flow::job::{Job, JobContext};

/// How often a job's progress reaches the screen.
pub const INTERVAL: Duration = Duration::from_millis(250);

/// One job under way.
struct Running {
    name: &'static str,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
    wait: Duration,
}

/// The jobs under way, and where their messages go.
pub struct Jobs {
    tx: Sender<Msg>,
    running: Vec<Running>,
}

impl Jobs {
    pub fn new(tx: Sender<Msg>) -> Self {
        Jobs {
            tx,
            running: Vec::new(),
        }
    }

    /// Starts `job`, after stopping and joining the one of its name (the app asks for a
    /// second only once the first has ended); one that cannot start says so.
    pub fn start<J: Job>(&mut self, job: J)
    where
        J::Msg: Into<Msg>,
    {
        self.start_all(vec![job]);
    }

    /// Starts a batch of jobs together (a run on several devices), after stopping and
    /// joining those of their names.
    pub fn start_all<J: Job>(&mut self, jobs: Vec<J>)
    where
        J::Msg: Into<Msg>,
    {
        for name in jobs.iter().map(Job::name) {
            self.stop_and_join(name);
        }
        for job in jobs {
            self.spawn(job);
        }
    }

    fn spawn<J: Job>(&mut self, job: J)
    where
        J::Msg: Into<Msg>,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let tx = self.tx.clone();
        // The job goes to its thread once that has started: if it cannot, the job is still
        // here to say why.
        let (give, take) = mpsc::channel::<J>();
        let spawned = std::thread::Builder::new()
            .name(job.thread_name())
            .spawn(move || {
                let Ok(job) = take.recv() else { return };
                let send = move |m: J::Msg| tx.send(m.into()).is_ok();
                // The screen hears the job's messages; its output is the CLI's.
                let _ = job.run(&JobContext::new(&flag, &send, INTERVAL));
            });
        match spawned {
            Ok(thread) => {
                let (name, wait) = (job.name(), job.stop_wait());
                let _ = give.send(job);
                self.running.push(Running {
                    name,
                    stop,
                    thread,
                    wait,
                });
            }
            Err(e) => {
                let _ = self.tx.send(job.cannot_start(&e).into());
            }
        }
    }

    /// Asks the jobs of `name` to stop (the stop key); they end on their own.
    pub fn stop(&self, name: &str) {
        for r in self.running.iter().filter(|r| r.name == name) {
            r.stop.store(true, Ordering::Relaxed);
        }
    }

    fn stop_and_join(&mut self, name: &str) {
        self.stop(name);
        let (these, others) = std::mem::take(&mut self.running)
            .into_iter()
            .partition(|r| r.name == name);
        self.running = others;
        for r in these {
            let _ = r.thread.join();
        }
    }

    /// Stops every job and waits for them to wind down, up to the longest `stop_wait` of
    /// those under way; one still running then is left to the process's end.
    pub fn stop_all(&mut self) {
        for r in &self.running {
            r.stop.store(true, Ordering::Relaxed);
        }
        let wait = self.running.iter().map(|r| r.wait).max();
        let deadline = Instant::now() + wait.unwrap_or_default();
        for r in self.running.drain(..) {
            while !r.thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if r.thread.is_finished() {
                let _ = r.thread.join();
            }
        }
    }
}

/// Runs `f` on the calling thread with the context of the job named `job`, its messages
/// going to `tx` as the runner sends them (tests).
pub fn in_context<M: Send + Clone + std::fmt::Debug + 'static, R>(
    job: &'static str,
    stop: &AtomicBool,
    tx: &Sender<Msg>,
    interval: Duration,
    f: impl FnOnce(&JobContext<'_, M>) -> R,
) -> R {
    let send = |m: M| tx.send(Msg::job(job, m)).is_ok();
    f(&JobContext::new(stop, &send, interval))
}

/// Runs `job` to its end on the calling thread, its messages going to `tx` as the runner
/// hands them to the app (tests).
pub fn run_here<J: Job>(job: J, stop: &AtomicBool, tx: &Sender<Msg>) -> J::Output {
    in_context(job.name(), stop, tx, INTERVAL, |ctx| job.run(ctx))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts to `n` (or until stopped), then says whether it was stopped.
    struct Count {
        name: &'static str,
        n: u32,
    }

    impl Job for Count {
        type Msg = Msg;
        type Output = ();
        fn name(&self) -> &'static str {
            self.name
        }
        fn cannot_start(&self, error: &std::io::Error) -> Msg {
            Msg::HistoryNote(format!("cannot start: {error}"))
        }
        fn run(self, ctx: &JobContext<'_, Msg>) {
            let mut i = 0;
            while i < self.n && !ctx.stopped() {
                i += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            let how = if ctx.stopped() { "stopped" } else { "done" };
            ctx.send(Msg::HistoryNote(format!("{} {how}", self.name)));
        }
    }

    fn note(m: Msg) -> String {
        match m {
            Msg::HistoryNote(n) => n,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_job_runs_to_its_end_and_its_message_reaches_the_loop() {
        let (tx, rx) = mpsc::channel();
        let mut jobs = Jobs::new(tx);
        jobs.start(Count { name: "a", n: 3 });
        assert_eq!(
            note(rx.recv_timeout(Duration::from_secs(5)).unwrap()),
            "a done"
        );
        jobs.stop_all();
        assert!(jobs.running.is_empty());
    }

    #[test]
    fn stop_all_stops_every_job_and_waits_for_them() {
        let (tx, rx) = mpsc::channel();
        let mut jobs = Jobs::new(tx);
        jobs.start(Count {
            name: "a",
            n: u32::MAX,
        });
        jobs.start_all(vec![
            Count {
                name: "b",
                n: u32::MAX,
            },
            Count {
                name: "b",
                n: u32::MAX,
            },
        ]);
        assert_eq!(jobs.running.len(), 3);
        let asked = Instant::now();
        jobs.stop_all();
        assert!(asked.elapsed() < Duration::from_secs(2));
        let mut said: Vec<String> = rx.try_iter().map(note).collect();
        said.sort();
        assert_eq!(said, ["a stopped", "b stopped", "b stopped"]);
    }

    #[test]
    fn starting_a_job_again_stops_the_one_of_its_name_and_only_that() {
        let (tx, rx) = mpsc::channel();
        let mut jobs = Jobs::new(tx);
        jobs.start(Count {
            name: "a",
            n: u32::MAX,
        });
        jobs.start(Count {
            name: "b",
            n: u32::MAX,
        });
        jobs.start(Count { name: "a", n: 1 });
        // The first "a" was stopped and joined before the second started.
        let first = note(rx.recv_timeout(Duration::from_secs(5)).unwrap());
        assert_eq!(first, "a stopped");
        assert_eq!(
            note(rx.recv_timeout(Duration::from_secs(5)).unwrap()),
            "a done"
        );
        // "b" ran on until asked.
        jobs.stop("b");
        assert_eq!(
            note(rx.recv_timeout(Duration::from_secs(5)).unwrap()),
            "b stopped"
        );
        jobs.stop_all();
    }
}
