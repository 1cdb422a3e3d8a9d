use super::*;
use starling_protocol::classad::parse_ad;
use starling_protocol::identity::{Certificate, Keypair, Roles};

const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
const MINUTE: u64 = 60_000;
const DOMAIN: &str = "lab.test";

fn domain_key() -> Keypair {
    Keypair::from_seed(&[200; 32])
}
fn agent(n: u8) -> Keypair {
    Keypair::from_seed(&[n; 32])
}
fn peer() -> AgentId {
    agent(99).agent_id()
}

fn certificate(domain: &str, by: &Keypair, for_agent: &Keypair) -> Envelope {
    Certificate {
        domain: domain.to_owned(),
        domain_key: by.public(),
        agent: for_agent.agent_id(),
        roles: "execute".parse::<Roles>().unwrap(),
        valid_from: T0.saturating_sub_millis(MINUTE),
        valid_until: T0.saturating_add_millis(600 * MINUTE),
    }
    .issue(by, 1)
    .unwrap()
}

fn ad_text(name: &str, domain: &str) -> ClassAd {
    parse_ad(&format!(
        "[ MyType = \"Machine\"; Name = \"{name}\"; StarlingDomain = \"{domain}\"; Cpus = 4 ]"
    ))
    .unwrap()
}

/// A machine ad by agent `n`, certified in DOMAIN, sequence `seq`,
/// issued at `at` for three minutes.
fn signed(n: u8, seq: u64, at: Timestamp) -> Vec<u8> {
    let key = agent(n);
    let cert = certificate(DOMAIN, &domain_key(), &key);
    gossip::seal(
        &key,
        seq,
        at,
        3 * MINUTE,
        AdKind::Machine,
        &ad_text(&format!("m{n}"), DOMAIN),
        &[cert],
    )
    .unwrap()
    .to_bytes()
}

fn view() -> View {
    let mut anchors = TrustAnchors::default();
    anchors.insert(DOMAIN, domain_key().public());
    View::new(DOMAIN, anchors, Freshness::default())
}

fn offer(view: &mut View, bytes: &[u8], now: Timestamp) -> Verdict {
    view.offer(bytes, Some(&Topic::ads(DOMAIN).unwrap()), Some(peer()), now)
}

fn names(view: &View) -> Vec<String> {
    let mut names: Vec<String> = view
        .select(Some("Machine"), None)
        .iter()
        .map(|h| text_attr(&h.ad, "Name").unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_certified_ad_enters_and_a_newer_one_replaces_it() {
    let mut v = view();
    assert!(matches!(
        offer(&mut v, &signed(1, 1, T0), T0),
        Verdict::Accepted { .. }
    ));
    assert!(matches!(
        offer(&mut v, &signed(2, 1, T0), T0),
        Verdict::Accepted { .. }
    ));
    assert_eq!(names(&v), ["m1", "m2"]);
    let later = T0.saturating_add_millis(MINUTE);
    assert!(matches!(
        offer(&mut v, &signed(1, 2, later), later),
        Verdict::Accepted { .. }
    ));
    assert_eq!(v.len(), 2, "still one ad per signer");
    assert_eq!(v.counts().get("Machine"), Some(&2));
    assert_eq!(v.rejects(&peer()), 0);
}

/// A suspicion of agent `suspect` by agent `by` (certified in
/// `domain`), issued at `at`.
fn suspicion(by: u8, domain: &str, suspect: u8, at: Timestamp) -> Vec<u8> {
    let key = agent(by);
    let cert = certificate(domain, &domain_key(), &key);
    let ad = parse_ad(&format!(
        "[ MyType = \"Suspicion\"; StarlingDomain = \"{domain}\"; StarlingSuspect = \"{}\" ]",
        agent(suspect).agent_id()
    ))
    .unwrap();
    gossip::seal(&key, 1, at, MINUTE, AdKind::Suspicion, &ad, &[cert])
        .unwrap()
        .to_bytes()
}

#[test]
fn a_suspicion_hides_the_suspects_older_ad_until_it_speaks_again() {
    let mut v = view();
    offer(&mut v, &signed(1, 1, T0), T0);
    offer(&mut v, &signed(2, 1, T0), T0);
    let at = T0.saturating_add_millis(1_000);
    // Agent 2 lost agent 1 and says so: agent 1 leaves the view.
    assert_eq!(
        offer(&mut v, &suspicion(2, DOMAIN, 1, at), at),
        Verdict::Accepted {
            signer: agent(1).agent_id(),
            kind: AdKind::Suspicion
        }
    );
    assert_eq!(names(&v), ["m2"]);
    assert!(v.machine_of(&agent(1).agent_id()).is_none());
    // The same ad again (a late copy, a pulled page) does not bring it
    // back; a second suspicion has nothing left to hide and goes no
    // further.
    assert_eq!(
        offer(&mut v, &signed(1, 1, T0), at),
        Verdict::Ignored(Ignored::Duplicate)
    );
    assert_eq!(
        offer(&mut v, &suspicion(3, DOMAIN, 1, at), at),
        Verdict::Ignored(Ignored::Stale)
    );
    // Agent 1 was alive after all: its next ad refutes the suspicion.
    let later = at.saturating_add_millis(1_000);
    assert!(matches!(
        offer(&mut v, &signed(1, 2, later), later),
        Verdict::Accepted { .. }
    ));
    assert_eq!(names(&v), ["m1", "m2"]);
    // A suspicion older than the ad it would hide changes nothing.
    assert_eq!(
        offer(&mut v, &suspicion(2, DOMAIN, 1, at), later),
        Verdict::Ignored(Ignored::Stale)
    );
    assert_eq!(names(&v), ["m1", "m2"]);
    assert_eq!(v.rejects(&peer()), 0);
}

#[test]
fn a_suspicion_that_names_no_agent_or_its_own_signer_is_refused() {
    let mut v = view();
    offer(&mut v, &signed(1, 1, T0), T0);
    let key = agent(2);
    let cert = certificate(DOMAIN, &domain_key(), &key);
    for text in [
        "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\" ]".to_owned(),
        "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\"; StarlingSuspect = 42 ]"
            .to_owned(),
        "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\"; StarlingSuspect = \"x\" ]"
            .to_owned(),
        format!(
            "[ MyType = \"Suspicion\"; StarlingDomain = \"lab.test\"; StarlingSuspect = \"{}\" ]",
            key.agent_id()
        ),
    ] {
        let bytes = gossip::seal(
            &key,
            1,
            T0,
            MINUTE,
            AdKind::Suspicion,
            &parse_ad(&text).unwrap(),
            std::slice::from_ref(&cert),
        )
        .unwrap()
        .to_bytes();
        assert!(
            matches!(
                offer(&mut v, &bytes, T0),
                Verdict::Rejected(Rejection::Malformed(_))
            ),
            "{text}"
        );
    }
    assert_eq!(names(&v), ["m1"]);
    assert_eq!(v.rejects(&peer()), 4);
}

#[test]
fn the_same_ad_twice_is_ignored_not_held_against_the_sender() {
    let mut v = view();
    let ad = signed(1, 1, T0);
    offer(&mut v, &ad, T0);
    assert_eq!(offer(&mut v, &ad, T0), Verdict::Ignored(Ignored::Duplicate));
    assert_eq!(v.rejects(&peer()), 0);
}

#[test]
fn an_older_ad_is_a_replay_unless_it_merely_crossed_a_newer_one() {
    let mut v = view();
    let old = signed(1, 1, T0);
    let crossed = signed(1, 2, T0.saturating_add_millis(1_000));
    let newest_at = T0.saturating_add_millis(2 * MINUTE);
    offer(&mut v, &signed(1, 3, newest_at), newest_at);
    // Two minutes older than the newest, but just issued by our clock
    // (a relay was slow, or our clock is behind): not held against anyone.
    assert_eq!(
        offer(&mut v, &old, T0.saturating_add_millis(1_000)),
        Verdict::Ignored(Ignored::Stale)
    );
    // Three minutes old when it arrives: no relay is that late.
    let later = T0.saturating_add_millis(3 * MINUTE);
    assert!(matches!(
        offer(&mut v, &old, later),
        Verdict::Rejected(Rejection::Replayed { seq: 1, newest: 3 })
    ));
    let mut v = view();
    let at = T0.saturating_add_millis(2_000);
    offer(&mut v, &signed(1, 3, at), at);
    assert_eq!(
        offer(&mut v, &crossed, at),
        Verdict::Ignored(Ignored::Stale)
    );
    assert_eq!(v.rejects(&peer()), 0);
}

#[test]
fn oversized_garbage_forged_and_expired_ads_are_rejected_and_counted() {
    let mut v = view();
    let huge = vec![0u8; gossip::MAX_SIGNED_AD_LEN + 1];
    assert!(matches!(
        offer(&mut v, &huge, T0),
        Verdict::Rejected(Rejection::Oversized { .. })
    ));
    assert!(matches!(
        offer(&mut v, b"not an envelope", T0),
        Verdict::Rejected(Rejection::Malformed(_))
    ));
    let mut forged = signed(1, 1, T0);
    let last = forged.len() - 1;
    forged[last] ^= 1; // the signature's last byte
    assert!(matches!(
        offer(&mut v, &forged, T0),
        Verdict::Rejected(Rejection::Forged(_))
    ));
    let long_ago = T0.saturating_sub_millis(60 * MINUTE);
    assert!(matches!(
        offer(&mut v, &signed(1, 1, long_ago), T0),
        Verdict::Rejected(Rejection::Expired(_))
    ));
    assert!(v.is_empty());
    assert_eq!(v.rejects(&peer()), 4);
}

#[test]
fn a_page_checked_as_a_batch_judges_each_ad_as_if_it_came_alone() {
    let mut v = view();
    let mut forged = signed(3, 1, T0);
    let last = forged.len() - 1;
    forged[last] ^= 1; // the signature's last byte
    let long_ago = T0.saturating_sub_millis(60 * MINUTE);
    let page = vec![
        signed(1, 1, T0),
        forged,
        signed(2, 1, T0),
        b"not an envelope".to_vec(),
        signed(4, 1, long_ago),
        signed(1, 1, T0),
        signed(5, 1, T0),
    ];
    let verdicts = v.offer_page(&page, T0);
    let kinds: Vec<&str> = verdicts
        .iter()
        .map(|v| match v {
            Verdict::Accepted { .. } => "accepted",
            Verdict::Rejected(Rejection::Forged(_)) => "forged",
            Verdict::Rejected(Rejection::Malformed(_)) => "malformed",
            Verdict::Rejected(Rejection::Expired(_)) => "expired",
            Verdict::Ignored(Ignored::Duplicate) => "duplicate",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "accepted",
            "forged",
            "accepted",
            "malformed",
            "expired",
            "duplicate",
            "accepted"
        ]
    );
    assert_eq!(names(&v), ["m1", "m2", "m5"]);
    // A page of what is held already costs no signature check and is ignored.
    let again = v.offer_page(&[signed(2, 1, T0), signed(5, 1, T0)], T0);
    assert!(again
        .iter()
        .all(|v| matches!(v, Verdict::Ignored(Ignored::Duplicate))));
}

#[test]
fn ads_without_a_certificate_from_a_trusted_domain_are_rejected() {
    let mut v = view();
    let key = agent(1);
    let seal = |ad: &ClassAd, certs: &[Envelope]| {
        gossip::seal(&key, 1, T0, 3 * MINUTE, AdKind::Machine, ad, certs)
            .unwrap()
            .to_bytes()
    };
    let rogue_domain = Keypair::from_seed(&[201; 32]);
    let cases = [
        ("no certificate", seal(&ad_text("m1", DOMAIN), &[])),
        (
            "signed by a domain key not trusted here",
            seal(
                &ad_text("m1", DOMAIN),
                &[certificate(DOMAIN, &rogue_domain, &key)],
            ),
        ),
        (
            "a certificate admitting another agent",
            seal(
                &ad_text("m1", DOMAIN),
                &[certificate(DOMAIN, &domain_key(), &agent(2))],
            ),
        ),
        (
            "an ad claiming another domain than its certificate",
            seal(
                &ad_text("m1", "other.test"),
                &[certificate(DOMAIN, &domain_key(), &key)],
            ),
        ),
    ];
    for (what, bytes) in cases {
        assert!(
            matches!(
                offer(&mut v, &bytes, T0),
                Verdict::Rejected(Rejection::NotAdmitted(_))
            ),
            "{what}"
        );
    }
    // A good ad on another domain's topic.
    assert!(matches!(
        v.offer(
            &signed(1, 1, T0),
            Some(&Topic::ads("other.test").unwrap()),
            Some(peer()),
            T0
        ),
        Verdict::Rejected(Rejection::NotAdmitted(_))
    ));
    assert!(v.is_empty());
}

#[test]
fn a_withdrawal_removes_the_ad_and_its_predecessor_cannot_come_back() {
    let mut v = view();
    offer(&mut v, &signed(1, 1, T0), T0);
    let key = agent(1);
    let cert = certificate(DOMAIN, &domain_key(), &key);
    let at = T0.saturating_add_millis(1_000);
    let withdrawal = gossip::seal(
        &key,
        2,
        at,
        0,
        AdKind::Machine,
        &ad_text("m1", DOMAIN),
        &[cert],
    )
    .unwrap()
    .to_bytes();
    assert!(matches!(
        offer(&mut v, &withdrawal, at),
        Verdict::Accepted { .. }
    ));
    assert!(v.is_empty());
    assert_eq!(
        offer(&mut v, &signed(1, 1, T0), at),
        Verdict::Ignored(Ignored::Stale)
    );
    assert!(v.is_empty());
    // Once the predecessor would have expired, the tombstone goes too.
    v.expire(T0.saturating_add_millis(3 * MINUTE));
    assert!(v.main.ads.is_empty());
}

#[test]
fn ads_leave_the_view_when_they_expire() {
    let mut v = view();
    offer(&mut v, &signed(1, 1, T0), T0);
    offer(&mut v, &signed(2, 1, T0.saturating_add_millis(MINUTE)), T0);
    assert_eq!(v.expire(T0.saturating_add_millis(3 * MINUTE - 1)), 0);
    assert_eq!(v.expire(T0.saturating_add_millis(3 * MINUTE)), 1);
    assert_eq!(names(&v), ["m2"]);
    assert_eq!(v.expire(T0.saturating_add_millis(4 * MINUTE)), 1);
    assert!(v.is_empty() && v.counts().is_empty());
}

#[test]
fn pages_cover_every_ad_once_in_order() {
    let mut v = view();
    for n in 1..=25 {
        offer(&mut v, &signed(n, 1, T0), T0);
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let (ads, next) = v.page(None, &[], after.as_ref(), 7);
        assert!(ads.len() <= 7);
        seen.extend(ads.iter().map(|e| e.header().signer));
        match next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    let mut sorted = seen.clone();
    sorted.sort_by_key(|k| *k.as_bytes());
    sorted.dedup();
    assert_eq!(sorted.len(), 25);
    let (only_jobs, _) = v.page(None, &[Kind::SUBMITTER_AD], None, 100);
    assert!(only_jobs.is_empty());
    // A cursor that is not one of ours starts over rather than failing.
    let junk = Cursor::new(vec![1, 2, 3]).unwrap();
    assert_eq!(v.page(None, &[], Some(&junk), 100).0.len(), 25);
}

#[test]
fn a_digest_brings_only_what_differs_from_a_colleagues_view() {
    let (mut mine, mut theirs) = (view(), view());
    for n in 1..=40 {
        offer(&mut mine, &signed(n, 1, T0), T0);
        // They missed agent 7's ad and hold agent 9's an update behind.
        match n {
            7 => {}
            9 => {
                offer(&mut theirs, &signed(n, 2, T0), T0);
            }
            _ => {
                offer(&mut theirs, &signed(n, 1, T0), T0);
            }
        }
    }
    let holding = theirs.digest(&[]);
    let (page, next) = mine.page_differing(&[], None, 100, &holding);
    assert!(next.is_none());
    let sent: Vec<_> = page.iter().map(|e| e.header().signer).collect();
    for n in [7, 9] {
        assert!(sent.contains(&agent(n).public()), "agent {n}'s ad is sent");
    }
    // Only the two buckets that differ travel, not the view.
    let buckets = |signers: &[_]| {
        let mut b: Vec<usize> = signers
            .iter()
            .map(|s: &starling_protocol::identity::PublicKey| {
                starling_protocol::view::Digest::bucket(s.as_bytes())
            })
            .collect();
        b.sort_unstable();
        b.dedup();
        b
    };
    assert!(
        buckets(&sent).len() <= 2 && sent.len() < 40,
        "{}",
        sent.len()
    );
    // Taking the page in brings them to agreement; nothing more is sent.
    for envelope in &page {
        offer(&mut theirs, &envelope.to_bytes(), T0);
    }
    assert_eq!(names(&theirs).len(), 40);
    let (rest, _) = mine.page_differing(&[], None, 100, &theirs.digest(&[]));
    // Agent 9's newer ad is theirs alone: it differs until we take it too.
    assert!(rest.iter().all(|e| starling_protocol::view::Digest::bucket(
        e.header().signer.as_bytes()
    ) == starling_protocol::view::Digest::bucket(
        agent(9).public().as_bytes()
    )));
    offer(&mut mine, &signed(9, 2, T0), T0);
    let (none, _) = mine.page_differing(&[], None, 100, &theirs.digest(&[]));
    assert!(none.is_empty());
}

#[test]
fn a_constraint_selects_ads() {
    let mut v = view();
    offer(&mut v, &signed(1, 1, T0), T0);
    offer(&mut v, &signed(2, 1, T0), T0);
    let c = starling_protocol::classad::parse_expr("Name == \"m2\"").unwrap();
    let picked = v.select(Some("Machine"), Some(&c));
    assert_eq!(picked.len(), 1);
    assert!(v.select(Some("Submitter"), None).is_empty());
    assert_eq!(v.select(None, None).len(), 2);
}

const FOREIGN: &str = "far.test";

fn foreign_key() -> Keypair {
    Keypair::from_seed(&[202; 32])
}

/// A view of an agent of DOMAIN that also trusts FOREIGN.
fn trusting_view() -> View {
    let mut anchors = TrustAnchors::default();
    anchors.insert(DOMAIN, domain_key().public());
    anchors.insert(FOREIGN, foreign_key().public());
    View::new(DOMAIN, anchors, Freshness::default())
}

/// A machine ad by agent `n` of `domain` (signed by `by`), meant for
/// `audience` (its `StarlingAudience`, as ClassAd text; `None`: none).
fn addressed(n: u8, domain: &str, by: &Keypair, audience: Option<&str>, seq: u64) -> Vec<u8> {
    let key = agent(n);
    let mut ad = ad_text(&format!("m{n}"), domain);
    if let Some(a) = audience {
        ad.insert(
            Name::new(gossip::AUDIENCE_ATTR).unwrap(),
            starling_protocol::classad::parse_expr(a).unwrap(),
        );
    }
    gossip::seal(
        &key,
        seq,
        T0,
        3 * MINUTE,
        AdKind::Machine,
        &ad,
        &[certificate(domain, by, &key)],
    )
    .unwrap()
    .to_bytes()
}

#[test]
fn a_foreign_ad_enters_only_when_meant_for_this_domain_on_its_topic() {
    let mut v = trusting_view();
    let for_us = Topic::export(FOREIGN, DOMAIN).unwrap();
    let meant = addressed(1, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
    assert!(matches!(
        v.offer(&meant, Some(&for_us), Some(peer()), T0),
        Verdict::Accepted { .. }
    ));
    assert_eq!(names(&v), ["m1"]);
    // From a pulled page (no topic) as well.
    let mut pulled = trusting_view();
    assert!(matches!(
        pulled.offer(&meant, None, None, T0),
        Verdict::Accepted { .. }
    ));
    // Its internal ad, one meant for a third domain, an audience that
    // is not a string, or a forged audience on our topic: refused,
    // counted, never a panic.
    let cases = [
        (
            "internal, on its own topic",
            addressed(2, FOREIGN, &foreign_key(), None, 1),
            Some(Topic::ads(FOREIGN).unwrap()),
        ),
        (
            "internal, pulled",
            addressed(2, FOREIGN, &foreign_key(), None, 1),
            None,
        ),
        (
            "internal, copied onto our topic",
            addressed(2, FOREIGN, &foreign_key(), None, 1),
            Some(for_us.clone()),
        ),
        (
            "meant for a third domain, on its topic",
            addressed(3, FOREIGN, &foreign_key(), Some("\"third.test\""), 1),
            Some(Topic::export(FOREIGN, "third.test").unwrap()),
        ),
        (
            "meant for a third domain, copied onto ours",
            addressed(3, FOREIGN, &foreign_key(), Some("\"third.test\""), 1),
            Some(for_us.clone()),
        ),
        (
            "an audience that is no string",
            addressed(4, FOREIGN, &foreign_key(), Some("42"), 1),
            Some(for_us.clone()),
        ),
        (
            "an audience that is undefined",
            addressed(4, FOREIGN, &foreign_key(), Some("Nowhere"), 1),
            Some(for_us.clone()),
        ),
        (
            "an audience that is not a domain name",
            addressed(4, FOREIGN, &foreign_key(), Some("\"a/b\""), 1),
            Some(for_us.clone()),
        ),
        (
            "our own domain's ad on the foreign topic",
            addressed(5, DOMAIN, &domain_key(), Some("\"lab.test\""), 1),
            Some(for_us.clone()),
        ),
    ];
    for (what, bytes, topic) in cases {
        let verdict = v.offer(&bytes, topic.as_ref(), Some(peer()), T0);
        assert!(
            matches!(verdict, Verdict::Rejected(Rejection::NotAdmitted(_))),
            "{what}: {verdict:?}"
        );
    }
    assert_eq!(names(&v), ["m1"]);
    assert_eq!(v.rejects(&peer()), 9);
}

#[test]
fn this_domains_ads_for_an_audience_are_relayed_and_served_to_it_but_never_counted() {
    let mut v = trusting_view();
    offer(&mut v, &signed(1, 1, T0), T0);
    let to_far = Topic::export(DOMAIN, FOREIGN).unwrap();
    let copy = addressed(1, DOMAIN, &domain_key(), Some("\"far.test\""), 1);
    // Same signer and sequence as the internal ad, on another shelf.
    assert!(matches!(
        v.offer(&copy, Some(&to_far), Some(peer()), T0),
        Verdict::Accepted { .. }
    ));
    assert!(matches!(
        v.offer(
            &addressed(2, DOMAIN, &domain_key(), Some("\"far.test\""), 1),
            Some(&to_far),
            Some(peer()),
            T0
        ),
        Verdict::Accepted { .. }
    ));
    assert_eq!(
        v.offer(&copy, Some(&to_far), Some(peer()), T0),
        Verdict::Ignored(Ignored::Duplicate)
    );
    assert_eq!(names(&v), ["m1"], "the copies are not in the view");
    assert_eq!(v.len(), 1);
    assert_eq!(v.exported_to(FOREIGN), 2);
    // Pages: our own agents get the view, the audience only its copies,
    // anyone else nothing.
    let signers = |page: Vec<Envelope>| -> Vec<String> {
        page.iter()
            .map(|e| {
                let ad = gossip::open(e, T0, &Freshness::default()).unwrap().ad;
                format!(
                    "{}:{}",
                    text_attr(&ad, "Name").unwrap(),
                    text_attr(&ad, gossip::AUDIENCE_ATTR).unwrap_or_default()
                )
            })
            .collect()
    };
    assert_eq!(signers(v.page(None, &[], None, 100).0), ["m1:"]);
    let mut far = signers(v.page(Some(FOREIGN), &[], None, 100).0);
    far.sort();
    assert_eq!(far, ["m1:far.test", "m2:far.test"]);
    assert!(v.page(Some("third.test"), &[], None, 100).0.is_empty());
    // What far.test's own agents export to us goes back to far.test's
    // agents too (where their own domain is, for a newcomer), page by
    // page in one order with our copies.
    let theirs = addressed(9, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
    let for_us = Topic::export(FOREIGN, DOMAIN).unwrap();
    assert!(matches!(
        v.offer(&theirs, Some(&for_us), Some(peer()), T0),
        Verdict::Accepted { .. }
    ));
    let mut far = Vec::new();
    let mut after = None;
    loop {
        let (page, next) = v.page(Some(FOREIGN), &[], after.as_ref(), 1);
        far.extend(signers(page));
        match next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    far.sort();
    assert_eq!(far, ["m1:far.test", "m2:far.test", "m9:lab.test"]);
    assert_eq!(signers(v.page(None, &[], None, 100).0).len(), 2);
    // On the internal topic, a copy is misaddressed.
    assert!(matches!(
        offer(
            &mut v,
            &addressed(3, DOMAIN, &domain_key(), Some("\"far.test\""), 1),
            T0
        ),
        Verdict::Rejected(Rejection::NotAdmitted(_))
    ));
    // A withdrawal of the copy takes it off the audience's pages.
    let key = agent(1);
    let mut ad = ad_text("m1", DOMAIN);
    ad.insert(
        Name::new(gossip::AUDIENCE_ATTR).unwrap(),
        starling_protocol::classad::parse_expr("\"far.test\"").unwrap(),
    );
    let at = T0.saturating_add_millis(1_000);
    let withdrawal = gossip::seal(
        &key,
        2,
        at,
        0,
        AdKind::Machine,
        &ad,
        &[certificate(DOMAIN, &domain_key(), &key)],
    )
    .unwrap()
    .to_bytes();
    assert!(matches!(
        v.offer(&withdrawal, Some(&to_far), Some(peer()), at),
        Verdict::Accepted { .. }
    ));
    let mut far = signers(v.page(Some(FOREIGN), &[], None, 100).0);
    far.sort();
    assert_eq!(far, ["m2:far.test", "m9:lab.test"]);
    assert_eq!(
        names(&v),
        ["m1", "m9"],
        "the internal ad and far.test's stay"
    );
    // When the domain stops trusting the audience, its shelf goes.
    let mut anchors = TrustAnchors::default();
    anchors.insert(DOMAIN, domain_key().public());
    v.set_anchors(anchors, &[DOMAIN.to_owned()]);
    assert_eq!(v.exported_to(FOREIGN), 0);
    assert_eq!(names(&v), ["m1"]);
}

#[test]
fn a_bundle_brings_the_internal_ad_and_keeps_each_copy_for_its_audience_to_hand_on() {
    let mut v = trusting_view();
    let ours = Topic::ads(DOMAIN).unwrap();
    let internal = signed(1, 1, T0);
    let copy = addressed(1, DOMAIN, &domain_key(), Some("\"far.test\""), 1);
    let bundle = gossip::bundle(&[internal, copy.clone()]).remove(0);
    let verdicts = v.offer_bundle(&bundle, &ours, Some(peer()), T0);
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts
        .iter()
        .all(|b| matches!(b.verdict, Verdict::Accepted { .. })));
    assert_eq!(
        verdicts[0].relay, None,
        "the internal ad stays in the domain"
    );
    assert_eq!(verdicts[1].relay, Some((FOREIGN.to_owned(), copy)));
    assert!(matches!(
        bundle_verdict(&verdicts),
        Verdict::Accepted { .. }
    ));
    assert_eq!(names(&v), ["m1"]);
    assert_eq!(v.exported_to(FOREIGN), 1);
    // The same bundle again: nothing new, nothing to hand on.
    let again = v.offer_bundle(&bundle, &ours, Some(peer()), T0);
    assert!(again.iter().all(|b| b.relay.is_none()));
    assert_eq!(bundle_verdict(&again), Verdict::Ignored(Ignored::Duplicate));
    assert_eq!(v.rejects(&peer()), 0);
}

#[test]
fn a_bundle_with_another_domains_ad_or_junk_is_refused_and_counted_once() {
    let mut v = trusting_view();
    let ours = Topic::ads(DOMAIN).unwrap();
    // far.test's ad meant for us is welcome on its export topic, never
    // inside a bundle on our domain's topic.
    let foreign = addressed(2, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
    let mixed = gossip::bundle(&[signed(1, 1, T0), foreign, b"junk".to_vec()]).remove(0);
    let verdicts = v.offer_bundle(&mixed, &ours, Some(peer()), T0);
    assert!(matches!(verdicts[0].verdict, Verdict::Accepted { .. }));
    assert!(matches!(
        &verdicts[1].verdict,
        Verdict::Rejected(Rejection::NotAdmitted(why)) if why.contains("far.test")
    ));
    assert!(matches!(
        verdicts[2].verdict,
        Verdict::Rejected(Rejection::Malformed(_))
    ));
    assert!(matches!(bundle_verdict(&verdicts), Verdict::Rejected(_)));
    assert_eq!(v.rejects(&peer()), 1);
    assert_eq!(v.exported_to(FOREIGN), 0);
    // A message that is no bundle at all, or a bundle on an export topic.
    let junk = v.offer_bundle(b"not a bundle", &ours, Some(peer()), T0);
    assert!(matches!(
        &junk[..],
        [BundledVerdict { verdict: Verdict::Rejected(Rejection::Malformed(why)), relay: None }]
            if why.contains("bundle of ads")
    ));
    let export = Topic::export(DOMAIN, FOREIGN).unwrap();
    let copy = addressed(3, DOMAIN, &domain_key(), Some("\"far.test\""), 1);
    let wrong = gossip::bundle(&[copy]).remove(0);
    let verdicts = v.offer_bundle(&wrong, &export, Some(peer()), T0);
    assert!(matches!(verdicts[0].verdict, Verdict::Rejected(_)));
    assert_eq!(v.rejects(&peer()), 3);
}

#[test]
fn garbage_under_an_audience_topic_never_panics() {
    let mut v = trusting_view();
    let topics = [
        Topic::export(FOREIGN, DOMAIN).unwrap(),
        Topic::export(DOMAIN, FOREIGN).unwrap(),
        Topic::Flock,
    ];
    let good = addressed(1, FOREIGN, &foreign_key(), Some("\"lab.test\""), 1);
    for topic in &topics {
        for cut in [0, 1, 10, good.len() / 2, good.len() - 1] {
            let verdict = v.offer(&good[..cut], Some(topic), Some(peer()), T0);
            assert!(matches!(verdict, Verdict::Rejected(_)), "{verdict:?}");
        }
        for bit in (0..good.len() * 8).step_by(97) {
            let mut flipped = good.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let _ = v.offer(&flipped, Some(topic), Some(peer()), T0);
        }
    }
}

#[test]
fn reject_counts_are_kept_for_a_bounded_number_of_peers() {
    let mut v = view();
    for n in 0..(MAX_TRACKED_PEERS as u32 + 10) {
        let mut seed = [7u8; 32];
        seed[..4].copy_from_slice(&n.to_be_bytes());
        v.count_reject(Keypair::from_seed(&seed).agent_id());
    }
    assert_eq!(v.rejects.len(), MAX_TRACKED_PEERS);
}
