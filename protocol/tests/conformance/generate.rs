//! Seeded random expressions, ads and job/machine pairs, well-typed and
//! ill-typed, for comparing against HTCondor.

/// SplitMix64: tiny, seedable, and the same on every platform.
pub(crate) struct Generator {
    state: u64,
}

// Not `ad`, `other`, `my` or `target`: inside a match HTCondor's context ad
// defines those (see differences.txt).
const NAMES: &[&str] = &[
    "a", "b", "c", "x", "y", "Name", "Cpus", "Memory", "Owner", "l", "dd",
];

// Not `unparse`: HTCondor pretty-prints lists and ads there, on purpose
// different (see differences.txt); the corpus covers it.
const FUNCTIONS: &[(&str, usize, usize)] = &[
    ("ifThenElse", 3, 3),
    ("isUndefined", 1, 1),
    ("isError", 1, 1),
    ("isString", 1, 1),
    ("isInteger", 1, 1),
    ("isReal", 1, 1),
    ("isBoolean", 1, 1),
    ("isList", 1, 1),
    ("isClassAd", 1, 1),
    ("int", 1, 1),
    ("real", 1, 1),
    ("string", 1, 1),
    ("bool", 1, 1),
    ("floor", 1, 1),
    ("ceiling", 1, 1),
    ("round", 1, 1),
    ("pow", 2, 2),
    ("quantize", 2, 2),
    ("strcat", 0, 3),
    ("substr", 2, 3),
    ("strcmp", 2, 2),
    ("stricmp", 2, 2),
    ("toUpper", 1, 1),
    ("toLower", 1, 1),
    ("size", 1, 1),
    ("member", 2, 2),
    ("identicalMember", 2, 2),
    ("sum", 1, 1),
    ("avg", 1, 1),
    ("min", 1, 1),
    ("max", 1, 1),
    ("split", 1, 2),
    ("join", 1, 2),
    ("stringListMember", 2, 3),
    ("stringListSize", 1, 2),
    ("stringListSum", 1, 2),
    ("stringListMin", 1, 2),
    ("stringListMax", 1, 2),
    ("stringListAvg", 1, 2),
    ("stringListsIntersect", 2, 3),
    ("versioncmp", 2, 2),
    ("regexp", 2, 3),
    ("replace", 3, 4),
    ("anyCompare", 3, 3),
    ("allCompare", 3, 3),
    ("interval", 1, 1),
];

const BINARY: &[&str] = &[
    "||", "&&", "|", "^", "&", "==", "!=", "=?=", "=!=", "is", "isnt", "<", "<=", ">", ">=", "<<",
    ">>", ">>>", "+", "-", "*", "/", "%",
];

impl Generator {
    pub(crate) fn new(seed: u64) -> Generator {
        Generator { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn literal(&mut self) -> String {
        match self.below(14) {
            0 => self
                .pick(&[
                    "0",
                    "1",
                    "-1",
                    "2",
                    "7",
                    "-7",
                    "3",
                    "100",
                    "9223372036854775807",
                    "-9223372036854775808",
                ])
                .into(),
            1 => self.below(1000).to_string(),
            2 => self
                .pick(&[
                    "0.0", "-0.0", "1.5", "-2.5", "0.1", "1e10", "1e300", "3.0", "2.5e-3",
                ])
                .into(),
            3 => self
                .pick(&[
                    "\"\"",
                    "\"abc\"",
                    "\"ABC\"",
                    "\"a b c\"",
                    "\"1,2,3\"",
                    "\"10\"",
                    "\"x\"",
                    "\"a,b\"",
                    "\"1.5\"",
                    "\"true\"",
                ])
                .into(),
            4 => self.pick(&["true", "false"]).into(),
            5 => "undefined".into(),
            6 => "error".into(),
            7 => self
                .pick(&[
                    "{}",
                    "{1,2,3}",
                    "{\"a\",\"B\"}",
                    "{1,\"a\",2.5}",
                    "{undefined,1}",
                    "{[a=1],[a=2]}",
                ])
                .into(),
            8 => self
                .pick(&["[]", "[a=1]", "[a=1; b=a+1]", "[x=\"s\"; y={1}]"])
                .into(),
            9 => format!("absTime({})", self.below(2_000_000_000)),
            10 => format!("relTime({})", self.below(200_000) as i64 - 1000),
            _ => {
                let name = self.pick(NAMES);
                match self.below(4) {
                    0 => format!("MY.{name}"),
                    1 => format!("TARGET.{name}"),
                    _ => name.into(),
                }
            }
        }
    }

    pub(crate) fn expr(&mut self, depth: usize) -> String {
        if depth == 0 || self.chance(30) {
            return self.literal();
        }
        let d = depth - 1;
        match self.below(10) {
            0 => format!("{}{}", self.pick(&["-", "!", "~", "+"]), self.operand(d)),
            1..=3 => {
                let op = self.pick(BINARY);
                format!("{} {op} {}", self.operand(d), self.operand(d))
            }
            4 => format!(
                "{} ? {} : {}",
                self.operand(d),
                self.operand(d),
                self.operand(d)
            ),
            5 => format!("{} ?: {}", self.operand(d), self.operand(d)),
            6 => format!(
                "{}[{}]",
                self.operand(d),
                self.pick(&["0", "1", "2", "-1", "\"a\"", "undefined"])
            ),
            7 => {
                let base = self.operand(d);
                // `1.x` would lex as a malformed real: parenthesise numbers.
                if base.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                    format!("({base}).{}", self.pick(NAMES))
                } else {
                    format!("{base}.{}", self.pick(NAMES))
                }
            }
            _ => {
                let (name, lo, hi) = FUNCTIONS[self.below(FUNCTIONS.len())];
                let n = lo + self.below(hi - lo + 1);
                let args: Vec<String> = (0..n).map(|_| self.expr(d)).collect();
                format!("{name}({})", args.join(", "))
            }
        }
    }

    fn operand(&mut self, depth: usize) -> String {
        let e = self.expr(depth);
        if e.contains(' ') {
            format!("({e})")
        } else {
            e
        }
    }

    pub(crate) fn ad(&mut self) -> String {
        let mut attrs = Vec::new();
        for name in NAMES {
            if self.chance(60) {
                let value = if self.chance(70) {
                    self.literal_no_refs()
                } else {
                    self.expr(2)
                };
                attrs.push(format!("{name} = {value}"));
            }
        }
        format!("[{}]", attrs.join("; "))
    }

    fn literal_no_refs(&mut self) -> String {
        loop {
            let l = self.literal();
            if !l.starts_with(|c: char| c.is_ascii_alphabetic())
                || l.starts_with("abs")
                || l.starts_with("rel")
                || l == "true"
                || l == "false"
                || l == "undefined"
                || l == "error"
            {
                return l;
            }
        }
    }

    pub(crate) fn case(&mut self) -> super::Case {
        let depth = 1 + self.below(4);
        super::Case {
            expr: self.expr(depth),
            my: if self.chance(70) {
                Some(self.ad())
            } else {
                None
            },
            target: if self.chance(50) {
                Some(self.ad())
            } else {
                None
            },
            type_only: false,
        }
    }

    /// A job and a machine ad with HTCondor-style Requirements and Rank.
    pub(crate) fn match_pair(&mut self) -> (String, String) {
        let owners = ["\"alice\"", "\"bob\"", "\"carol\""];
        let job_req = [
            "TARGET.Cpus >= RequestCpus && TARGET.Memory >= RequestMemory",
            "TARGET.Arch == \"X86_64\" && TARGET.OpSys == \"LINUX\" && TARGET.Memory >= RequestMemory",
            "TARGET.Cpus >= RequestCpus",
            "Memory >= RequestMemory",
            "TARGET.HasGPU =?= true",
            "TARGET.LoadAvg < 0.5 || TARGET.Cpus > 4",
            "member(TARGET.Name, {\"slot1@a\", \"slot1@b\"})",
            "true",
            "TARGET.Disk >= RequestDisk && regexp(\"^slot1\", TARGET.Name)",
        ];
        let job_rank = [
            "TARGET.Memory",
            "TARGET.Cpus * 10 + TARGET.Memory / 1024",
            "0",
            "TARGET.Mips",
            "-TARGET.LoadAvg",
            "undefined",
        ];
        let machine_req = [
            "START",
            "TARGET.RequestCpus <= Cpus && TARGET.RequestMemory <= Memory",
            "START && TARGET.Owner != \"bob\"",
            "(TARGET.RequestCpus ?: 1) <= Cpus",
            "KeyboardIdle > 15 * 60 && LoadAvg < 0.3",
            "RequestCpus <= Cpus",
        ];
        let start = [
            "true",
            "LoadAvg < 0.5",
            "TARGET.Owner == \"alice\" || KeyboardIdle > 600",
            "false",
            "TARGET.RequestMemory <= Memory",
        ];
        let machine_rank = [
            "0",
            "TARGET.Owner == \"carol\"",
            "TARGET.RequestCpus",
            "ifThenElse(TARGET.Owner =?= \"alice\", 10, 1)",
        ];
        let job = format!(
            "[Owner = {}; RequestCpus = {}; RequestMemory = {}; RequestDisk = {}; Requirements = {}; Rank = {}]",
            owners[self.below(3)],
            1 + self.below(8),
            256 * (1 + self.below(32)),
            1024 * self.below(100),
            job_req[self.below(job_req.len())],
            job_rank[self.below(job_rank.len())],
        );
        let gpu = if self.chance(30) {
            "; HasGPU = true"
        } else {
            ""
        };
        let machine = format!(
            "[Name = \"slot1@{}\"; Arch = \"{}\"; OpSys = \"LINUX\"; Cpus = {}; Memory = {}; Disk = {}; LoadAvg = {}; KeyboardIdle = {}; Mips = {}{gpu}; START = {}; Requirements = {}; Rank = {}]",
            self.pick(&["a", "b", "c"]),
            self.pick(&["X86_64", "aarch64"]),
            1 + self.below(64),
            1024 * (1 + self.below(64)),
            1024 * self.below(1000),
            self.pick(&["0.0", "0.25", "0.7", "1.5"]),
            self.below(3600),
            self.below(10000),
            start[self.below(start.len())],
            machine_req[self.below(machine_req.len())],
            machine_rank[self.below(machine_rank.len())],
        );
        (job, machine)
    }
}
