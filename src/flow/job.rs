//! `Job`: a long-running task both faces start the same way (a scan, a triage, a flush
//! check). It gets what it needs when made, runs on its own thread, sends its own messages
//! (`Job::Msg`), reads one stop flag, and puts back what it changed before it returns.
//!
//! The TUI's runner (`tui::jobs`) starts any job and turns its messages into the screen's; the
//! CLI's (`commands::job`) runs one, draws its messages as the progress line and hands its
//! `Output` to the report. A job that sends often paces itself with `Every`.
//!
//! A screen asks for a job as plain data, an `Order`, sent as `Cmd::StartJob(JobOrder)`; the
//! TUI makes the job with what only it owns (`JobEnv`). Its messages come back type-erased
//! (`JobMsg`, named after the job) to the screen that registered that name.

use std::any::Any;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::changes::RestoreOutcome;
use crate::history::History;
use crate::model::ChosenDevice;
use crate::sys::{DriveControl, SysRoot};

/// A long-running task: one file under `src/flow/` and its `pub mod` line in `flow.rs`.
pub trait Job: Send + 'static {
    /// What it tells as it goes and at its end.
    type Msg: Send + Clone + fmt::Debug + 'static;

    /// What it hands back to the CLI's report (a scan's whole map); the screen gets messages.
    type Output: Send + 'static;

    /// Its name; the runner runs one job of a name at a time (a batch of them together).
    fn name(&self) -> &'static str;

    /// Its thread's name (a panic message says it): by default its name.
    fn thread_name(&self) -> String {
        self.name().to_string()
    }

    /// How long a quit waits for it to wind down once stopped.
    fn stop_wait(&self) -> Duration {
        Duration::from_secs(5)
    }

    /// What it says when its thread cannot be started.
    fn cannot_start(&self, error: &std::io::Error) -> Self::Msg;

    /// Runs to its end or until `ctx.stopped()`; puts back what it changed before it returns.
    fn run(self, ctx: &JobContext<'_, Self::Msg>) -> Self::Output;
}

/// What a running job is given: the stop flag, where messages go, how often to send.
pub struct JobContext<'a, M> {
    stop: &'a AtomicBool,
    send: &'a (dyn Fn(M) -> bool + Sync),
    /// How often its progress is wanted (the screen: every 250 ms).
    pub interval: Duration,
}

impl<'a, M> JobContext<'a, M> {
    /// A context that sends through `send` (false: nobody listens any more).
    pub fn new(
        stop: &'a AtomicBool,
        send: &'a (dyn Fn(M) -> bool + Sync),
        interval: Duration,
    ) -> Self {
        JobContext {
            stop,
            send,
            interval,
        }
    }

    /// The stop flag itself, for the engines that read it between steps.
    pub fn stop_flag(&self) -> &'a AtomicBool {
        self.stop
    }

    /// Whether the job was asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sends one message; false when nobody listens any more (the session ended).
    pub fn send(&self, msg: M) -> bool {
        (self.send)(msg)
    }
}

/// Paces a job's progress: `due` is true once per `every` (and the first time).
pub struct Every {
    every: Duration,
    last: Option<Instant>,
}

impl Every {
    pub fn new(every: Duration) -> Self {
        Every { every, last: None }
    }

    /// True once per `every`, and the first time; `force` makes it true now (a phase's end).
    pub fn due(&mut self, force: bool) -> bool {
        let due = force || self.last.is_none_or(|at| at.elapsed() >= self.every);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }
}

/// Settings jobs put back as they stopped: the TUI says them on its way out.
pub type PutBack = Arc<Mutex<Vec<RestoreOutcome>>>;

/// What a job is made with besides its order: what only the face that runs it owns.
#[derive(Clone)]
pub struct JobEnv {
    pub root: SysRoot,
    pub drives: Arc<dyn DriveControl>,
    /// Where finished work is recorded (none: not recorded, as in most tests).
    pub history: Option<History>,
    /// The session's change journal's directory (none: this session cannot change settings).
    pub journal_dir: Option<PathBuf>,
    /// How often progress is wanted (the screen: every 250 ms).
    pub interval: Duration,
    /// Where a job that switched settings adds what it put back.
    pub put_back: PutBack,
    /// Stand-ins tests give for a job's part (a triage's gatherer), found by their type.
    stand_ins: Vec<Arc<dyn Any + Send + Sync>>,
}

impl JobEnv {
    pub fn new(root: SysRoot, drives: Arc<dyn DriveControl>, interval: Duration) -> Self {
        JobEnv {
            root,
            drives,
            history: None,
            journal_dir: None,
            interval,
            put_back: PutBack::default(),
            stand_ins: Vec::new(),
        }
    }

    /// Uses `part` wherever a job asks for a `T` (`stand_in`): a stand-in in tests.
    pub fn with_stand_in<T: Any + Send + Sync>(mut self, part: T) -> Self {
        self.stand_ins.push(Arc::new(part));
        self
    }

    /// The stand-in of type `T` given last, if any (the job uses its real part otherwise).
    pub fn stand_in<T: Any + Clone>(&self) -> Option<T> {
        self.stand_ins
            .iter()
            .rev()
            .find_map(|s| s.downcast_ref::<T>())
            .cloned()
    }
}

/// A job asked for as plain data, made into its job when it starts. It lives in the job's file.
pub trait Order: Any + Send + Clone + PartialEq + fmt::Debug {
    type Job: Job;

    /// The job, made with what the runner's side owns.
    fn job(self, env: &JobEnv) -> Self::Job;

    /// Fills in each device as the admin chose it where the order has none (`App::stamp`).
    fn stamp(&mut self, _chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {}
}

/// Any `Order`, as a command carries it (`Cmd::StartJob`).
pub struct JobOrder(Box<dyn AnyOrder>);

trait AnyOrder: Send + fmt::Debug {
    fn as_any(&self) -> &dyn Any;
    fn clone_box(&self) -> Box<dyn AnyOrder>;
    fn same_as(&self, other: &dyn Any) -> bool;
    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>);
    fn job(self: Box<Self>, env: &JobEnv) -> AnyJob;
}

impl<O: Order> AnyOrder for O {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn clone_box(&self) -> Box<dyn AnyOrder> {
        Box::new(self.clone())
    }
    fn same_as(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<O>() == Some(self)
    }
    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        Order::stamp(self, chosen);
    }
    fn job(self: Box<Self>, env: &JobEnv) -> AnyJob {
        AnyJob(Box::new(Order::job(*self, env)))
    }
}

impl JobOrder {
    pub fn new(order: impl Order) -> Self {
        JobOrder(Box::new(order))
    }

    /// The order as its own type, if it is one (tests look at what a key asked for).
    pub fn get<O: Order>(&self) -> Option<&O> {
        self.0.as_any().downcast_ref()
    }

    pub fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        self.0.stamp(chosen);
    }

    /// The job it asks for, ready for the runner.
    pub fn job(self, env: &JobEnv) -> AnyJob {
        self.0.job(env)
    }
}

impl Clone for JobOrder {
    fn clone(&self) -> Self {
        JobOrder(self.0.clone_box())
    }
}

impl PartialEq for JobOrder {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_as(other.0.as_any())
    }
}

impl fmt::Debug for JobOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A job's message, its type erased and named after its job: `take` gives it back as the
/// job's own `Msg`.
pub struct JobMsg {
    job: &'static str,
    msg: Box<dyn AnyMsg>,
}

trait AnyMsg: Send + fmt::Debug {
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    fn clone_box(&self) -> Box<dyn AnyMsg>;
}

impl<M: Any + Send + Clone + fmt::Debug> AnyMsg for M {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn clone_box(&self) -> Box<dyn AnyMsg> {
        Box::new(self.clone())
    }
}

impl JobMsg {
    /// `msg` of the job named `job`.
    pub fn new<M: Any + Send + Clone + fmt::Debug>(job: &'static str, msg: M) -> Self {
        JobMsg {
            job,
            msg: Box::new(msg),
        }
    }

    /// The name of the job that sent it.
    pub fn job(&self) -> &'static str {
        self.job
    }

    /// The message as its own type, if it is one.
    pub fn get<M: Any>(&self) -> Option<&M> {
        self.msg.as_any().downcast_ref()
    }

    /// The message as its own type, or itself back if it is another.
    pub fn take<M: Any>(self) -> Result<M, JobMsg> {
        if self.get::<M>().is_none() {
            return Err(self);
        }
        let job = self.job;
        // It is an M (looked at above): the unit message is never made.
        self.msg
            .into_any()
            .downcast()
            .map(|m| *m)
            .map_err(|_| JobMsg::new(job, ()))
    }
}

impl Clone for JobMsg {
    fn clone(&self) -> Self {
        JobMsg {
            job: self.job,
            msg: self.msg.clone_box(),
        }
    }
}

impl fmt::Debug for JobMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}", self.job, self.msg)
    }
}

/// Any job, its messages erased to `JobMsg`: what an order becomes for the runner.
pub struct AnyJob(Box<dyn ErasedJob>);

trait ErasedJob: Send {
    fn name(&self) -> &'static str;
    fn thread_name(&self) -> String;
    fn stop_wait(&self) -> Duration;
    fn cannot_start(&self, error: &std::io::Error) -> JobMsg;
    fn run(self: Box<Self>, ctx: &JobContext<'_, JobMsg>);
}

impl<J: Job> ErasedJob for J {
    fn name(&self) -> &'static str {
        Job::name(self)
    }
    fn thread_name(&self) -> String {
        Job::thread_name(self)
    }
    fn stop_wait(&self) -> Duration {
        Job::stop_wait(self)
    }
    fn cannot_start(&self, error: &std::io::Error) -> JobMsg {
        JobMsg::new(Job::name(self), Job::cannot_start(self, error))
    }
    fn run(self: Box<Self>, ctx: &JobContext<'_, JobMsg>) {
        let name = Job::name(&*self);
        let send = |m: J::Msg| ctx.send(JobMsg::new(name, m));
        Job::run(*self, &JobContext::new(ctx.stop, &send, ctx.interval));
    }
}

impl Job for AnyJob {
    type Msg = JobMsg;
    // The screen hears the messages only.
    type Output = ();

    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn thread_name(&self) -> String {
        self.0.thread_name()
    }
    fn stop_wait(&self) -> Duration {
        self.0.stop_wait()
    }
    fn cannot_start(&self, error: &std::io::Error) -> JobMsg {
        self.0.cannot_start(error)
    }
    fn run(self, ctx: &JobContext<'_, JobMsg>) {
        self.0.run(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_is_due_first_then_once_per_interval_or_when_forced() {
        let mut e = Every::new(Duration::from_secs(3600));
        assert!(e.due(false));
        assert!(!e.due(false));
        assert!(e.due(true));
        let mut fast = Every::new(Duration::ZERO);
        assert!(fast.due(false) && fast.due(false));
    }

    #[test]
    fn the_context_reads_the_flag_and_says_when_nobody_listens() {
        let stop = AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::channel::<u8>();
        let send = move |m| tx.send(m).is_ok();
        let ctx = JobContext::new(&stop, &send, Duration::from_millis(250));
        assert!(!ctx.stopped());
        assert!(ctx.send(1));
        stop.store(true, Ordering::Relaxed);
        assert!(ctx.stopped());
        drop(rx);
        assert!(!ctx.send(2));
    }
}
