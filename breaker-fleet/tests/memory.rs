//! The fleet's rules on tokio's paused clock, with members that meet in one process.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use breaker_fleet::{
    Connection, Decision, Fleet, Heard, MemoryFleet, News, Options, Tally, Transport,
};
use breaker_runtime::{Breaker, Config, State, Verdict};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::Instant;

fn config(break_secs: u64) -> Config {
    Config::builder()
        .name("payments")
        .count_window(20)
        .min_calls(10)
        .probes(1)
        .break_duration(Duration::from_secs(break_secs))
        .build()
        .unwrap()
}

/// One process of the fleet: its breaker, its membership, and a caller loop.
struct Process {
    breaker: Arc<Breaker>,
    fleet: Option<Fleet>,
    healthy: Arc<AtomicBool>,
    /// Calls that reached the dependency, and probes among them.
    reached: Arc<AtomicU64>,
    probes: Arc<AtomicU64>,
    caller: JoinHandle<()>,
}

impl Process {
    fn start(place: &MemoryFleet, config: Config, every: Duration) -> Process {
        Process::spawn(Some(place), config, every)
    }

    /// A process of the fleet meeting at `place`, or on its own without one.
    fn spawn(place: Option<&MemoryFleet>, config: Config, every: Duration) -> Process {
        let breaker = Arc::new(Breaker::new(config));
        let fleet = place.map(|place| {
            Fleet::start(place.clone(), Options::default().with(Arc::clone(&breaker)))
        });
        let healthy = Arc::new(AtomicBool::new(true));
        let (reached, probes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let caller = tokio::spawn({
            let (breaker, healthy) = (Arc::clone(&breaker), Arc::clone(&healthy));
            let (reached, probes) = (Arc::clone(&reached), Arc::clone(&probes));
            async move {
                loop {
                    tokio::time::sleep(every).await;
                    let Ok(permit) = breaker.try_acquire() else {
                        continue;
                    };
                    reached.fetch_add(1, Ordering::SeqCst);
                    if permit.is_probe() {
                        probes.fetch_add(1, Ordering::SeqCst);
                    }
                    permit.record(if healthy.load(Ordering::SeqCst) {
                        Verdict::Success
                    } else {
                        Verdict::Failure
                    });
                }
            }
        });
        Process {
            breaker,
            fleet,
            healthy,
            reached,
            probes,
            caller,
        }
    }

    fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }

    fn state(&self) -> State {
        self.breaker.state()
    }

    fn stats(&self) -> breaker_fleet::Stats {
        self.fleet.as_ref().map(Fleet::stats).unwrap_or_default()
    }

    async fn stop(self) {
        self.caller.abort();
        if let Some(fleet) = self.fleet {
            fleet.leave().await;
        }
    }
}

async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Calls that reached a failing dependency from three processes before all of them were open.
async fn failed_calls_before_all_open(place: Option<&MemoryFleet>, every: Duration) -> (u64, u64) {
    let processes: Vec<Process> = (0..3)
        .map(|_| Process::spawn(place, config(30), every))
        .collect();
    for p in &processes {
        p.set_healthy(false);
    }
    wait_until(Duration::from_secs(5), "every member open", || {
        processes.iter().all(|p| p.state() == State::Open)
    })
    .await;
    let reached = processes
        .iter()
        .map(|p| p.reached.load(Ordering::SeqCst))
        .sum();
    let opens = processes.iter().map(|p| p.stats().fleet_opens).sum();
    for p in processes {
        p.stop().await;
    }
    (reached, opens)
}

#[tokio::test(start_paused = true)]
async fn an_outage_seen_by_all_opens_every_member_on_the_fleets_evidence() {
    // Each process calls every 100 ms: alone, one needs a second for `min_calls`.
    let every = Duration::from_millis(100);
    let (alone, _) = failed_calls_before_all_open(None, every).await;
    let place = MemoryFleet::new();
    let (together, opens) = failed_calls_before_all_open(Some(&place), every).await;
    eprintln!("failed calls before every process was open: {alone} alone, {together} as a fleet");
    assert!(opens >= 1, "the fleet decided");
    assert_eq!(alone, 30, "alone, each pays min_calls");
    assert!(together < alone, "{together} as a fleet, {alone} alone");
}

/// The table in docs/fleet.md: the fleet's gain shrinks as each process's own traffic grows.
#[tokio::test(start_paused = true)]
async fn at_high_traffic_each_process_opens_on_its_own_before_the_fleet_judges() {
    let mut row = Vec::new();
    for per_second in [5, 10, 20, 50, 100, 200] {
        let every = Duration::from_secs(1) / per_second;
        let (alone, _) = failed_calls_before_all_open(None, every).await;
        let place = MemoryFleet::new();
        let (together, opens) = failed_calls_before_all_open(Some(&place), every).await;
        eprintln!("at {per_second} calls a second: {alone} alone, {together} as a fleet");
        assert_eq!(alone, 30, "alone, each pays min_calls");
        if per_second >= 100 {
            // Its own min_calls failures within the first flush: each process opens on its
            // own before the fleet has seen them.
            assert_eq!((together, opens), (30, 0), "at {per_second} calls a second");
        }
        row.push(together);
    }
    assert!(
        row.is_sorted() && row[0] < 30,
        "the gain shrinks with traffic: {row:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn one_sick_process_opens_itself_not_the_fleet() {
    let place = MemoryFleet::new();
    let processes: Vec<Process> = (0..4)
        .map(|_| Process::start(&place, config(30), Duration::from_millis(10)))
        .collect();
    processes[0].set_healthy(false);
    tokio::time::sleep(Duration::from_secs(10)).await;

    assert_eq!(
        processes[0].state(),
        State::Open,
        "the sick one opened on its own"
    );
    for p in &processes[1..] {
        assert_eq!(p.state(), State::Closed, "a healthy one stayed closed");
    }
    let stats: Vec<_> = processes.iter().map(Process::stats).collect();
    assert!(
        stats[0].local_opens >= 1,
        "said so in its metrics: {:?}",
        stats[0]
    );
    assert!(stats.iter().all(|s| s.fleet_opens == 0), "{stats:?}");
    for p in processes {
        p.stop().await;
    }
}

#[tokio::test(start_paused = true)]
async fn exactly_one_probe_for_the_whole_fleet_per_half_open_period() {
    let place = MemoryFleet::new();
    let processes: Vec<Process> = (0..3)
        .map(|_| Process::start(&place, config(1), Duration::from_millis(5)))
        .collect();
    for p in &processes {
        p.set_healthy(false);
    }
    wait_until(Duration::from_secs(5), "the fleet open", || {
        processes.iter().all(|p| p.state() == State::Open)
    })
    .await;
    let leases = || processes.iter().map(|p| p.stats().leases).sum::<u64>();
    let probes = || {
        processes
            .iter()
            .map(|p| p.probes.load(Ordering::SeqCst))
            .sum::<u64>()
    };
    wait_until(Duration::from_secs(2000), "1 000 half-open periods", || {
        leases() >= 1000
    })
    .await;
    // The last period may have its lease and not yet its probe.
    let (leases, probes) = (leases(), probes());
    assert!(
        probes == leases || probes + 1 == leases,
        "{probes} probes in {leases} half-open periods"
    );
    let led: Vec<u64> = processes.iter().map(|p| p.stats().leases).collect();
    assert!(
        led.iter().all(|&n| n > 100),
        "the jitter spreads the lead across the fleet: {led:?}"
    );

    // Recovery: one probe closes every member, with empty windows.
    for p in &processes {
        p.set_healthy(true);
    }
    wait_until(Duration::from_secs(5), "every member closed", || {
        processes.iter().all(|p| p.state() == State::Closed)
    })
    .await;
    let probes_at_close = probes;
    assert!(
        self::probes_now(&processes) <= probes_at_close + 1,
        "one probe closed the fleet"
    );
    for p in processes {
        p.stop().await;
    }
}

fn probes_now(processes: &[Process]) -> u64 {
    processes
        .iter()
        .map(|p| p.probes.load(Ordering::SeqCst))
        .sum()
}

#[tokio::test(start_paused = true)]
async fn late_or_reordered_news_is_dropped() {
    let place = MemoryFleet::new();
    let p = Process::start(&place, config(30), Duration::from_secs(3600));
    let news = |generation, decision| News {
        breaker: "payments".into(),
        origin: 7,
        generation,
        decision,
    };
    place
        .announce(&news(
            5,
            Decision::Open {
                remaining: Duration::from_secs(30),
            },
        ))
        .await
        .unwrap();
    wait_until(Duration::from_secs(1), "the opening applied", || {
        p.state() == State::Open
    })
    .await;
    place.announce(&news(4, Decision::Close)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(p.state(), State::Open, "older news undoes nothing");
    assert_eq!(p.stats().stale, 1);
    place.announce(&news(6, Decision::Close)).await.unwrap();
    wait_until(Duration::from_secs(1), "the newer closing applied", || {
        p.state() == State::Closed
    })
    .await;
    p.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_member_that_joins_late_learns_the_opening_with_the_time_left() {
    let place = MemoryFleet::new();
    place
        .announce(&News {
            breaker: "payments".into(),
            origin: 7,
            generation: 1,
            decision: Decision::Open {
                remaining: Duration::from_secs(30),
            },
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let p = Process::start(&place, config(30), Duration::from_secs(3600));
    wait_until(Duration::from_secs(1), "the stored opening applied", || {
        p.state() == State::Open
    })
    .await;
    let at = p.breaker.snapshot().next_probe_at.unwrap();
    let left = at - Instant::now();
    // 20 s left of the break, and the hold past it (its jitter and a lease) before the
    // breaker would probe on its own.
    assert!(
        left > Duration::from_secs(19) && left < Duration::from_secs(25),
        "{left:?}"
    );
    p.stop().await;
}

#[tokio::test(start_paused = true)]
async fn without_the_fleet_every_member_acts_alone_and_rejoins_when_it_is_back() {
    let place = MemoryFleet::new();
    let processes: Vec<Process> = (0..3)
        .map(|_| Process::start(&place, config(2), Duration::from_millis(10)))
        .collect();
    for p in &processes {
        p.set_healthy(false);
    }
    wait_until(Duration::from_secs(5), "the fleet open", || {
        processes.iter().all(|p| p.state() == State::Open)
    })
    .await;
    place.disconnect();
    for p in &processes {
        p.set_healthy(true);
    }
    // Each breaker probes on its own once the fleet break is over, and closes.
    wait_until(
        Duration::from_secs(4),
        "every member closed on its own",
        || processes.iter().all(|p| p.state() == State::Closed),
    )
    .await;
    assert!(processes.iter().all(|p| !p.stats().connected));
    assert!(
        processes.iter().all(|p| p.stats().disconnects == 1),
        "each member said the fleet was lost"
    );
    place.reconnect();
    wait_until(Duration::from_secs(2), "every member back", || {
        processes.iter().all(|p| p.stats().connected)
    })
    .await;
    for p in processes {
        p.stop().await;
    }
}

/// A member's view of the meeting place whose flushes or announcements answer late, once
/// done, and whose generations are taken late: Redis on a busy machine, where a member spends
/// its time waiting on its own calls.
#[derive(Default)]
struct Late {
    place: MemoryFleet,
    flush: Duration,
    generation: Duration,
    announce: Duration,
    clear: Duration,
}

impl Transport for Late {
    type Error = breaker_fleet::Unreachable;

    async fn flush(
        &self,
        breaker: &str,
        span: Duration,
        bucket: Duration,
        delta: Tally,
    ) -> Result<Tally, Self::Error> {
        let window = self.place.flush(breaker, span, bucket, delta).await;
        tokio::time::sleep(self.flush).await;
        window
    }

    async fn clear(&self, breaker: &str) -> Result<(), Self::Error> {
        tokio::time::sleep(self.clear).await;
        self.place.clear(breaker).await
    }

    async fn generation(&self, breaker: &str) -> Result<u64, Self::Error> {
        tokio::time::sleep(self.generation).await;
        self.place.generation(breaker).await
    }

    async fn announce(&self, news: &News) -> Result<(), Self::Error> {
        let done = self.place.announce(news).await;
        tokio::time::sleep(self.announce).await;
        done
    }

    async fn announce_unless_decided(&self, news: &News, known: u64) -> Result<bool, Self::Error> {
        let done = self.place.announce_unless_decided(news, known).await;
        tokio::time::sleep(self.announce).await;
        done
    }

    async fn latest(&self, breaker: &str) -> Result<Option<News>, Self::Error> {
        self.place.latest(breaker).await
    }

    async fn lease(
        &self,
        breaker: &str,
        holder: u64,
        ttl: Duration,
    ) -> Result<Option<u64>, Self::Error> {
        self.place.lease(breaker, holder, ttl).await
    }

    async fn release(&self, breaker: &str, holder: u64) -> Result<(), Self::Error> {
        self.place.release(breaker, holder).await
    }

    fn listen(&self, inbox: UnboundedSender<Heard>) -> JoinHandle<()> {
        self.place.listen(inbox)
    }
}

/// A breaker that never opens on its own evidence: only the fleet's decisions open it.
fn fleet_only() -> Arc<Breaker> {
    Arc::new(Breaker::new(
        Config::builder()
            .name("payments")
            .count_window(1000)
            .min_calls(1000)
            .probes(1)
            .break_duration(Duration::from_secs(30))
            .build()
            .unwrap(),
    ))
}

/// Two members of `place`, each with a breaker only the fleet opens, the second reaching the
/// place through `late`; returned once both are connected.
async fn two_members(place: &MemoryFleet, late: Late) -> ([Arc<Breaker>; 2], [Fleet; 2]) {
    let breakers = [fleet_only(), fleet_only()];
    let options =
        |breaker: &Arc<Breaker>| Options::default().min_calls(10).with(Arc::clone(breaker));
    let members = [
        Fleet::start(place.clone(), options(&breakers[0])),
        Fleet::start(late, options(&breakers[1])),
    ];
    wait_until(Duration::from_secs(2), "both connected", || {
        members.iter().all(|member| member.stats().connected)
    })
    .await;
    (breakers, members)
}

/// An operator's closing from outside the members: the evidence cleared, a new generation
/// taken, and the closing announced under it.
async fn close_from_outside(place: &MemoryFleet) -> News {
    place.clear("payments").await.unwrap();
    let close = News {
        breaker: "payments".into(),
        origin: 7,
        generation: place.generation("payments").await.unwrap(),
        decision: Decision::Close,
    };
    place.announce(&close).await.unwrap();
    close
}

#[tokio::test(start_paused = true)]
async fn news_heard_while_a_member_waits_on_its_own_flush_is_applied_at_once() {
    let place = MemoryFleet::new();
    // Its flush answers five flushes late, within the second the member waits for a call.
    let late = Duration::from_millis(500);
    let flush_late = Late {
        place: place.clone(),
        flush: late,
        ..Late::default()
    };
    let ([deciding, waiting], [a, b]) = two_members(&place, flush_late).await;
    for _ in 0..20 {
        deciding.try_acquire().unwrap().record(Verdict::Failure);
    }
    wait_until(Duration::from_secs(1), "the fleet's decision", || {
        deciding.state() == State::Open
    })
    .await;
    let decided = Instant::now();
    wait_until(late, "the other member open", || {
        waiting.state() == State::Open
    })
    .await;
    assert!(
        decided.elapsed() < Duration::from_millis(5),
        "open {:?} after the decision, not after its own flush",
        decided.elapsed()
    );
    // Its flush, read before the news, comes back over the threshold: the fleet decided
    // already.
    tokio::time::sleep(late * 2).await;
    assert_eq!(place.announced(), 1, "one decision for the fleet");
    assert_eq!(b.stats().fleet_opens, 0);

    // Closed from outside while its flush still holds a reading from before: the stale
    // reading does not open the fleet again.
    close_from_outside(&place).await;
    wait_until(late, "both closed", || {
        deciding.state() == State::Closed && waiting.state() == State::Closed
    })
    .await;
    tokio::time::sleep(late * 4).await;
    assert_eq!(
        (deciding.state(), waiting.state()),
        (State::Closed, State::Closed)
    );
    assert_eq!(
        place.announced(),
        2,
        "the opening and the closing, nothing since"
    );
    a.leave().await;
    b.leave().await;
}

#[tokio::test(start_paused = true)]
async fn a_decision_overtaken_by_newer_news_while_it_is_announced_is_not_applied() {
    let place = MemoryFleet::new();
    let breaker = fleet_only();
    let late = Duration::from_millis(500);
    let member = Fleet::start(
        Late {
            place: place.clone(),
            announce: late,
            ..Late::default()
        },
        Options::default().min_calls(10).with(Arc::clone(&breaker)),
    );
    wait_until(Duration::from_secs(2), "connected", || {
        member.stats().connected
    })
    .await;
    for _ in 0..20 {
        breaker.try_acquire().unwrap().record(Verdict::Failure);
    }
    wait_until(Duration::from_secs(1), "its decision out", || {
        place.announced() == 1
    })
    .await;
    // While its announcement is still on its way back: a generation taken and not yet
    // announced, and a closing after it.
    let taken_meanwhile = place.generation("payments").await.unwrap();
    let close = News {
        breaker: "payments".into(),
        origin: 7,
        generation: place.generation("payments").await.unwrap(),
        decision: Decision::Close,
    };
    place.announce(&close).await.unwrap();
    tokio::time::sleep(late).await;
    assert_eq!(
        breaker.state(),
        State::Closed,
        "the closing is the newer word"
    );
    // The decision taken meanwhile comes last, and older than the closing it is dropped.
    let late_news = News {
        generation: taken_meanwhile,
        decision: Decision::Open {
            remaining: Duration::from_secs(30),
        },
        ..close
    };
    place.announce(&late_news).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(breaker.state(), State::Closed, "{:?}", member.stats());
    assert_eq!(member.stats().stale, 1);
    assert_eq!(member.stats().fleet_opens, 0, "its decision did not hold");
    member.leave().await;
}

#[tokio::test(start_paused = true)]
async fn a_member_that_hears_the_fleets_decision_while_taking_a_generation_does_not_decide_again() {
    let place = MemoryFleet::new();
    // Its generations come late: its INCR reaches Redis after anything decided meanwhile.
    let late = Duration::from_millis(500);
    let generation_late = Late {
        place: place.clone(),
        generation: late,
        ..Late::default()
    };
    let ([first, second], [a, b]) = two_members(&place, generation_late).await;
    for _ in 0..20 {
        first.try_acquire().unwrap().record(Verdict::Failure);
    }
    // Both find the window over the threshold; the first decides at once, the second hears it
    // while its own generation is on its way.
    wait_until(Duration::from_secs(1), "both open", || {
        first.state() == State::Open && second.state() == State::Open
    })
    .await;
    // Closed from outside at once, before the second member's generation comes back.
    close_from_outside(&place).await;
    tokio::time::sleep(late * 2).await;
    assert_eq!(
        (first.state(), second.state()),
        (State::Closed, State::Closed),
        "the closing holds"
    );
    assert_eq!(place.announced(), 2, "the opening and the closing");
    a.leave().await;
    b.leave().await;
}

#[tokio::test(start_paused = true)]
async fn two_members_flushing_at_the_same_moment_decide_once() {
    let place = MemoryFleet::new();
    // Started at the same instant: their flushes fall at the same moments of the paused
    // clock, and both find the same finished bucket over the threshold.
    let breakers = [fleet_only(), fleet_only()];
    let members = breakers.each_ref().map(|breaker| {
        Fleet::start(
            place.clone(),
            Options::default().min_calls(10).with(Arc::clone(breaker)),
        )
    });
    for breaker in &breakers {
        for _ in 0..6 {
            breaker.try_acquire().unwrap().record(Verdict::Failure);
        }
    }
    wait_until(Duration::from_secs(1), "both open", || {
        breakers.iter().all(|b| b.state() == State::Open)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stats = members.each_ref().map(Fleet::stats);
    assert_eq!(
        place.announced(),
        1,
        "one decision for the fleet: {stats:?}"
    );
    assert_eq!(
        stats.iter().map(|s| s.fleet_opens).sum::<u64>(),
        1,
        "{stats:?}"
    );
    assert!(stats.iter().all(|s| s.stale == 0), "{stats:?}");
    for member in members {
        member.leave().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_member_is_connecting_until_its_first_answer_and_can_await_it() {
    let place = MemoryFleet::new();
    let member = Fleet::start(place.clone(), Options::default().with(fleet_only()));
    let stats = member.stats();
    assert_eq!(
        (stats.connection, stats.connected, stats.disconnects),
        (Connection::Connecting, false, 0),
        "not yet connected, and nothing lost"
    );
    let started = Instant::now();
    member.connected().await;
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "its first call answers at once"
    );
    let stats = member.stats();
    assert_eq!(
        (stats.connection, stats.connected),
        (Connection::Connected, true)
    );
    member.leave().await;

    // A place down when joining: connecting for as long, never disconnected.
    place.disconnect();
    let member = Fleet::start(place.clone(), Options::default().with(fleet_only()));
    tokio::time::sleep(Duration::from_secs(5)).await;
    let stats = member.stats();
    assert_eq!(
        (stats.connection, stats.disconnects),
        (Connection::Connecting, 0)
    );
    place.reconnect();
    tokio::time::timeout(Duration::from_millis(1), member.connected())
        .await
        .expect("connected as the place is back");
    member.leave().await;
}

#[tokio::test(start_paused = true)]
async fn the_connection_tells_every_loss_and_return_and_the_leave() {
    let place = MemoryFleet::new();
    let member = Fleet::start(place.clone(), Options::default().with(fleet_only()));
    let mut connection = member.connection();
    assert_eq!(*connection.borrow_and_update(), Connection::Connecting);
    let next = async |connection: &mut tokio::sync::watch::Receiver<Connection>| {
        tokio::time::timeout(Duration::from_secs(1), connection.changed())
            .await
            .expect("a change within a second")
            .expect("the member is there");
        *connection.borrow_and_update()
    };
    assert_eq!(next(&mut connection).await, Connection::Connected);
    for round in 1..=2 {
        place.disconnect();
        assert_eq!(next(&mut connection).await, Connection::Disconnected);
        assert_eq!(member.stats().disconnects, round);
        // Cut off, it stays so, however long.
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(!connection.has_changed().unwrap());
        place.reconnect();
        assert_eq!(next(&mut connection).await, Connection::Connected);
        assert!(member.stats().connected);
    }
    member.leave().await;
    assert_eq!(next(&mut connection).await, Connection::Left);
    assert!(
        connection.changed().await.is_err(),
        "nothing after the leave"
    );
}

#[tokio::test(start_paused = true)]
async fn the_probes_closing_does_not_let_the_outages_evidence_open_the_fleet_again() {
    let place = MemoryFleet::new();
    // A break well within the fleet window, whose evidence of the outage outlives it: only the
    // closing's emptying of the window forgets it. Each member empties it late.
    let breaker = || {
        Arc::new(Breaker::new(
            Config::builder()
                .name("payments")
                .count_window(1000)
                .min_calls(1000)
                .probes(1)
                .break_duration(Duration::from_secs(1))
                .build()
                .unwrap(),
        ))
    };
    let breakers = [breaker(), breaker()];
    let members = breakers.each_ref().map(|breaker| {
        let late = Late {
            place: place.clone(),
            clear: Duration::from_millis(500),
            ..Late::default()
        };
        Fleet::start(
            late,
            Options::default().min_calls(10).with(Arc::clone(breaker)),
        )
    });
    for _ in 0..20 {
        breakers[0].try_acquire().unwrap().record(Verdict::Failure);
    }
    wait_until(Duration::from_secs(1), "the fleet open", || {
        breakers.iter().all(|b| b.state() == State::Open)
    })
    .await;
    // The break ends; the one member that leads probes, and its success closes the fleet.
    let mut probes = 0;
    wait_until(
        Duration::from_secs(5),
        "the probe to close the fleet",
        || {
            for b in &breakers {
                if let Ok(permit) = b.try_acquire() {
                    probes += u32::from(permit.is_probe());
                    permit.record(Verdict::Success);
                }
            }
            breakers.iter().all(|b| b.state() == State::Closed)
        },
    )
    .await;
    assert_eq!(probes, 1);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let stats = members.each_ref().map(Fleet::stats);
    assert_eq!(
        breakers.each_ref().map(|b| b.state()),
        [State::Closed, State::Closed],
        "{stats:?}"
    );
    assert_eq!(
        place.announced(),
        3,
        "the opening, the probe and the closing, nothing since: {stats:?}"
    );
    for member in members {
        member.leave().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_member_back_from_a_loss_takes_up_the_fleets_opening_instead_of_deciding_it_again() {
    let place = MemoryFleet::new();
    let ([first, second], [a, b]) = two_members(
        &place,
        Late {
            place: place.clone(),
            ..Late::default()
        },
    )
    .await;
    for _ in 0..20 {
        first.try_acquire().unwrap().record(Verdict::Failure);
    }
    wait_until(Duration::from_secs(1), "the fleet open", || {
        first.state() == State::Open && second.state() == State::Open
    })
    .await;
    // Lost for a second of the 30 s break, and back while its evidence is still in the window.
    place.disconnect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    place.reconnect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let stats = [a.stats(), b.stats()];
    assert_eq!((first.state(), second.state()), (State::Open, State::Open));
    assert_eq!(
        place.announced(),
        1,
        "one decision for the outage: {stats:?}"
    );
    assert!(
        stats.iter().all(|s| s.stale == 0 && s.disconnects == 1),
        "the stored opening read again is no stale message: {stats:?}"
    );
    // Taken up again, the opening's end is the fleet's: one probe, on the lease.
    tokio::time::sleep(Duration::from_secs(35)).await;
    let stats = [a.stats(), b.stats()];
    assert_eq!(stats.iter().map(|s| s.leases).sum::<u64>(), 1, "{stats:?}");
    a.leave().await;
    b.leave().await;
}
