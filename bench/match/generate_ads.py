#!/usr/bin/env python3
"""Generate a realistic pool of partitionable-slot machine ads and a job ad.

The ads are written in HTCondor's long ("old") format, the way
``condor_status -l`` and ``condor_q -l`` print them: one ``Attr = expr`` per
line, ads separated by a blank line.  Each machine ad is the partitionable
slot of one execute node (about 90 attributes: hardware, OS, load, idle
times, benchmark figures, the slot's children, address and version strings,
file-transfer and container capabilities, CUDA attributes and per-GPU nested
ads on GPU nodes) with HTCondor's own ``Requirements = START &&
(WithinResourceLimits)``, the ``WithinResourceLimits`` expression the startd
publishes for a partitionable slot, and a ``START`` policy that varies from
machine to machine (idle/load policies, owner block lists, working-hours
rules, GPU reservations).

The job ad is what ``condor_submit`` makes of a vanilla-universe submit file
with ``request_cpus``/``request_memory`` set and the default Requirements.

Output is deterministic: the same ``--ads`` and ``--seed`` give byte-identical
files.  With the defaults about half of the machines match the job.

Usage::

    generate_ads.py --ads 100000 --machines machines.ads --job job.ad
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Callable, List

DOMAIN = "cluster.example.org"

#: Reference time of the snapshot (seconds since the epoch).
NOW = 1_732_000_000

#: ``WithinResourceLimits`` as a partitionable slot publishes it (one line).
WITHIN_RESOURCE_LIMITS = (
    "(ifThenElse(TARGET._condor_RequestCpus =!= undefined,"
    "MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,"
    "ifThenElse(TARGET.RequestCpus =!= undefined,"
    "MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && "
    "ifThenElse(TARGET._condor_RequestMemory =!= undefined,"
    "MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,"
    "ifThenElse(TARGET.RequestMemory =!= undefined,"
    "MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && "
    "ifThenElse(TARGET._condor_RequestDisk =!= undefined,"
    "MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,"
    "ifThenElse(TARGET.RequestDisk =!= undefined,"
    "MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)){gpus})"
)
WITHIN_RESOURCE_LIMITS_GPUS = (
    " && ifThenElse(TARGET.RequestGPUs =!= undefined,"
    "MY.ConsumptionGPUs <= MY.GPUs,true)"
)

#: ``Consumption*`` attributes: HTCondor's own (``quantize``), or the same
#: values computed with arithmetic only, for implementations without
#: ``quantize``.
CONSUMPTION = {
    "quantize": {
        "ConsumptionCpus": "quantize(target.RequestCpus,{ 1 })",
        "ConsumptionMemory": "quantize(target.RequestMemory,{ 128 })",
        "ConsumptionDisk": "quantize(target.RequestDisk,{ 1024 })",
        "ConsumptionGPUs": "quantize(target.RequestGPUs,{ 1 })",
    },
    "arith": {
        "ConsumptionCpus": "target.RequestCpus",
        "ConsumptionMemory": "((target.RequestMemory + 127) / 128) * 128",
        "ConsumptionDisk": "((target.RequestDisk + 1023) / 1024) * 1024",
        "ConsumptionGPUs": "target.RequestGPUs",
    },
}

# (weight, OpSys, OpSysAndVer, OpSysName, OpSysMajorVer, OpSysVer, long name,
#  kernel release)
OPERATING_SYSTEMS = [
    (46, "LINUX", "AlmaLinux9", "AlmaLinux", 9, 904,
     "AlmaLinux release 9.4 (Seafoam Ocelot)", "5.14.0-427.22.1.el9_4.x86_64"),
    (22, "LINUX", "Rocky8", "Rocky", 8, 810,
     "Rocky Linux release 8.10 (Green Obsidian)", "4.18.0-553.5.1.el8_10.x86_64"),
    (12, "LINUX", "Ubuntu22", "Ubuntu", 22, 2204,
     "Ubuntu 22.04.4 LTS", "5.15.0-113-generic"),
    (8, "LINUX", "CentOS7", "CentOS", 7, 709,
     "CentOS Linux release 7.9.2009 (Core)", "3.10.0-1160.119.1.el7.x86_64"),
    (2, "WINDOWS", "WINDOWS1000", "Windows", 10, 1000,
     "Windows 10 Enterprise", "10.0.19045"),
]

CONDOR_VERSIONS = [
    (50, "23.0.12", "2024-06-13", 739441),
    (30, "23.10.1", "2024-09-12", 758312),
    (20, "24.0.1", "2024-10-31", 769745),
]

GPU_MODELS = [
    # (name, capability, global memory MB, compute units, cores per CU)
    ("NVIDIA A100-SXM4-40GB", 8.0, 40338, 108, 64),
    ("NVIDIA A40", 8.6, 45416, 84, 128),
    ("Tesla V100-PCIE-32GB", 7.0, 32501, 80, 64),
    ("NVIDIA GeForce RTX 2080 Ti", 7.5, 11012, 68, 64),
]

OWNERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
GROUPS = ["group_physics", "group_chem", "group_bio", "group_cms", "group_atlas"]


def weighted(rng: random.Random, table: list) -> tuple:
    """Pick a row of ``table`` whose first column is its weight."""
    total = sum(row[0] for row in table)
    x = rng.uniform(0, total)
    for row in table:
        x -= row[0]
        if x <= 0:
            return row
    return table[-1]


def q(s: str) -> str:
    """A ClassAd string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def clist(items: List[str]) -> str:
    """A ClassAd list literal as HTCondor prints it."""
    return "{ " + ",".join(items) + " }" if items else "{  }"


def real(x: float) -> str:
    """A real literal as HTCondor prints it (always with a decimal point)."""
    s = "%.6g" % x
    if "." not in s and "e" not in s and "inf" not in s and "nan" not in s:
        s += ".0"
    return s


# ---------------------------------------------------------------------------
# START policies: each returns the expression for one machine.


def start_idle_or_quiet(rng: random.Random) -> str:
    """The example policy: resources, then keyboard idle or low load, then a
    blocked owner."""
    idle_min = rng.choice([5, 10, 15, 15, 15, 30])
    load = rng.choice(["0.3", "0.3", "0.5", "0.8"])
    bad = rng.choice(["baduser", "baduser", "mallory", rng.choice(OWNERS)])
    return (
        "(TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && "
        f"(KeyboardIdle > {idle_min} * 60 || LoadAvg < {load}) && "
        f'(TARGET.Owner =!= "{bad}")'
    )


def start_desktop(rng: random.Random) -> str:
    """HTCondor's classic desktop policy: owner away and CPU otherwise idle."""
    idle_min = rng.choice([15, 15, 20, 30])
    return (
        f"((KeyboardIdle > {idle_min} * 60) && "
        "(((LoadAvg - CondorLoadAvg) <= 0.3) || "
        '(State != "Unclaimed" && State != "Owner"))) && '
        '(TARGET.Owner =!= "baduser")'
    )


def start_working_hours(rng: random.Random) -> str:
    """Only outside working hours (clock attributes of the machine), unless
    the job is small."""
    start_h = rng.choice([7, 8, 9])
    end_h = rng.choice([17, 18, 19])
    small = rng.choice([2048, 4096])
    return (
        f"((ClockDay == 0 || ClockDay == 6) || ClockMin < {start_h} * 60 || "
        f"ClockMin > {end_h} * 60 || TARGET.RequestMemory <= {small}) && "
        "(TARGET.RequestCpus <= Cpus)"
    )


def start_groups(rng: random.Random) -> str:
    """A group-owned node: its groups always, others only when lightly
    loaded, and never a blocked user."""
    g1, g2 = rng.sample(GROUPS, 2)
    bad = rng.choice(OWNERS)
    return (
        f'(TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "{g1}" || '
        f'TARGET.AccountingGroup == "{g2}" || TotalLoadAvg < 0.6 * TotalCpus) && '
        f'(TARGET.Owner =!= "{bad}") && (TARGET.RequestMemory <= Memory)'
    )


def start_gpu_reserve(rng: random.Random) -> str:
    """A GPU node keeps CPUs back for GPU jobs."""
    keep = rng.choice([1, 2, 4])
    return (
        "ifThenElse(TARGET.RequestGPUs =?= undefined || TARGET.RequestGPUs == 0,"
        f"Cpus - TARGET.RequestCpus >= {keep},true) && "
        "(TARGET.RequestCpus <= Cpus) && (TARGET.Owner =!= \"baduser\")"
    )


START_POLICIES: List[tuple] = [
    (45, start_idle_or_quiet),
    (15, start_desktop),
    (15, start_working_hours),
    (25, start_groups),
]

# Machine Rank: how much the machine prefers a job.
MACHINE_RANKS = [
    (60, lambda rng: "0.0"),
    (15, lambda rng: f'ifThenElse(TARGET.Owner == "{rng.choice(OWNERS)}",10,0)'),
    (15, lambda rng: f'(TARGET.AccountingGroup =?= "{rng.choice(GROUPS)}.alice") * 5'),
    (10, lambda rng: "TARGET.RequestCpus"),
]


# ---------------------------------------------------------------------------


def machine_ad(i: int, rng: random.Random, consumption: str) -> str:
    """The long-format text of machine ``i``'s partitionable slot (ends with
    a blank line)."""
    host = f"host{i:05d}.{DOMAIN}"
    ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
    port = 9618
    sock = f"startd_{rng.randrange(1000, 99999)}_{rng.randrange(16**4):04x}"
    sinful = f"<{ip}:{port}?addrs={ip}-{port}&alias={host}&noUDP&sock={sock}>"
    _, opsys, opsysver, osname, osmajor, osver, oslong, kernel = weighted(rng, OPERATING_SYSTEMS)
    arch = "X86_64"
    if opsys == "LINUX" and rng.random() < 0.07:
        arch = "aarch64"
        kernel = kernel.replace("x86_64", "aarch64")
    _, cver, cdate, cbuild = weighted(rng, CONDOR_VERSIONS)
    gpu = rng.random() < 0.10 and arch == "X86_64" and opsys == "LINUX"

    total_cpus = rng.choice([8, 16, 24, 32, 48, 64, 64, 96, 128])
    mem_per_core = rng.choice([2048, 3072, 4096, 4096, 8192])
    total_mem = total_cpus * mem_per_core - rng.choice([0, 512, 1024])
    total_disk = rng.choice([200, 450, 900, 1800, 3600]) * 1_000_000  # KiB
    n_gpus = rng.choice([1, 2, 4, 8]) if gpu else 0

    # Children: dynamic slots already carved out of this partitionable slot.
    busy_frac = rng.choice([0.0, 0.0, 0.25, 0.5, 0.75, 0.9, 1.0, 1.0])
    child_cpus: List[int] = []
    child_mem: List[int] = []
    used_cpus = used_mem = 0
    while used_cpus < total_cpus * busy_frac:
        c = min(rng.choice([1, 2, 4, 4, 8, 8, 16]), total_cpus - used_cpus)
        mm = min(c * rng.choice([1024, 2048, 4096]), total_mem - used_mem)
        if c <= 0 or mm <= 0:
            break
        child_cpus.append(c)
        child_mem.append(mm)
        used_cpus += c
        used_mem += mm
    n_child = len(child_cpus)
    cpus = total_cpus - used_cpus
    memory = total_mem - used_mem
    disk = max(0, total_disk - sum(rng.randrange(1_000_000, 20_000_000) for _ in range(n_child)))
    child_owners = [rng.choice(OWNERS) for _ in range(n_child)]

    desktop = rng.random() < 0.2
    keyboard_idle = rng.randrange(0, 3600) if desktop else rng.randrange(3600, 4_000_000)
    condor_load = round(used_cpus * rng.uniform(0.85, 1.0), 3)
    owner_load = round(rng.expovariate(2.5), 3) if desktop else round(rng.expovariate(10), 3)
    total_load = round(condor_load + owner_load, 3)
    load_avg = round(owner_load if n_child else total_load, 3)
    mips = rng.randrange(15000, 40000)
    kflops = rng.randrange(1_000_000, 4_000_000)
    entered = NOW - rng.randrange(60, 2_000_000)
    daemon_start = entered - rng.randrange(0, 5_000_000)
    clock_min = rng.randrange(0, 1440)
    state, activity = ("Unclaimed", "Idle")
    if rng.random() < 0.03:
        state, activity = ("Owner", "Idle")
    elif rng.random() < 0.02:
        state, activity = ("Drained", "Retiring")

    start_fn = start_gpu_reserve if gpu and rng.random() < 0.7 else weighted(rng, START_POLICIES)[1]
    start = start_fn(rng)
    rank = weighted(rng, MACHINE_RANKS)[1](rng)
    consumption_attrs = CONSUMPTION[consumption]

    a: List[tuple] = []
    add = a.append
    add(("Activity", q(activity)))
    add(("AddressV1", q(f"{{[ p=\"primary\"; a=\"{ip}\"; port={port}; n=\"Internet\"; "
                        f"alias=\"{host}\"; spid=\"{sock}\"; noUDP=true; ]}}")))
    add(("Arch", q(arch)))
    add(("AuthenticatedIdentity", q(f"condor@{DOMAIN}")))
    add(("ChildAccountingGroup", clist([q(f"{rng.choice(GROUPS)}.{o}") for o in child_owners])))
    add(("ChildActivity", clist(['"Busy"'] * n_child)))
    add(("ChildCpus", clist([str(c) for c in child_cpus])))
    add(("ChildMemory", clist([str(mm) for mm in child_mem])))
    add(("ChildName", clist([q(f"slot1_{k + 1}@{host}") for k in range(n_child)])))
    add(("ChildRemoteOwner", clist([q(f"{o}@{DOMAIN}") for o in child_owners])))
    add(("ChildState", clist(['"Claimed"'] * n_child)))
    add(("ClockDay", str(rng.randrange(0, 7))))
    add(("ClockMin", str(clock_min)))
    add(("CondorLoadAvg", real(0.0 if n_child else condor_load)))
    add(("CondorPlatform", q(f"$CondorPlatform: {arch}-{osname}_{osmajor} $")))
    add(("CondorVersion", q(f"$CondorVersion: {cver} {cdate} BuildID: {cbuild} "
                            f"PackageID: {cver}-1 GitSHA: {rng.randrange(16**8):08x} $")))
    add(("ConsoleIdle", str(keyboard_idle + rng.randrange(0, 600))))
    for k in ("ConsumptionCpus", "ConsumptionDisk", "ConsumptionMemory"):
        add((k, consumption_attrs[k]))
    if gpu:
        add(("ConsumptionGPUs", consumption_attrs["ConsumptionGPUs"]))
    add(("CpuBusy", "((LoadAvg - CondorLoadAvg) >= 0.5)"))
    add(("Cpus", str(cpus)))
    add(("CurrentRank", "0.0"))
    add(("DaemonStartTime", str(daemon_start)))
    add(("DetectedCpus", str(total_cpus)))
    add(("DetectedMemory", str(total_mem + rng.choice([512, 1024, 2048]))))
    add(("Disk", str(disk)))
    if rng.random() < 0.6:
        add(("DockerVersion", q("Docker version 24.0.7, build afdd53b")))
        add(("HasDocker", "true"))
    add(("EnteredCurrentActivity", str(entered)))
    add(("EnteredCurrentState", str(entered)))
    add(("ExpectedMachineGracefulDrainingBadput", str(rng.randrange(0, 5_000_000))))
    add(("FileSystemDomain", q(DOMAIN)))
    if gpu:
        model, cap, gmem, cus, cores = rng.choice(GPU_MODELS)
        ids = [f"GPU-{rng.randrange(16**8):08x}" for _ in range(n_gpus)]
        add(("AvailableGPUs", clist([f"GPUs_{g.replace('-', '_')}" for g in ids])))
        add(("CUDACapability", real(cap)))
        add(("CUDAClockMhz", real(rng.choice([1410.0, 1740.0, 1380.0]))))
        add(("CUDAComputeUnits", str(cus)))
        add(("CUDACoresPerCU", str(cores)))
        add(("CUDADeviceName", q(model)))
        add(("CUDADriverVersion", "12.4"))
        add(("CUDAECCEnabled", "true"))
        add(("CUDAGlobalMemoryMb", str(gmem)))
        add(("CUDAMaxSupportedVersion", "12040"))
        add(("DetectedGPUs", q(", ".join(ids))))
        add(("GPUs", str(n_gpus - min(n_gpus, n_child // 2))))
        add(("GPUsMemoryUsage", "undefined"))
        for g in ids:
            add((f"GPUs_{g.replace('-', '_')}",
                 f"[ Id = {q(g)}; Capability = {real(cap)}; DeviceName = {q(model)}; "
                 f"GlobalMemoryMb = {gmem}; ECCEnabled = true; ]"))
        add(("TotalGPUs", str(n_gpus)))
    add(("HasFileTransfer", "true" if rng.random() < 0.97 else "false"))
    add(("HasFileTransferPluginMethods",
         q("box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash")))
    add(("HasJobTransferPlugins", "true"))
    add(("HasReconnect", "true"))
    add(("HasSelfCheckpointTransfers", "true"))
    add(("HasSingularity", "true" if rng.random() < 0.5 else "false"))
    add(("IsOwner", "(START =?= false)"))
    add(("IsValidCheckpointPlatform",
         "(TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && "
         "((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))"))
    add(("IsWakeAble", "false"))
    add(("JobStarts", str(rng.randrange(0, 5000))))
    add(("KeyboardIdle", str(keyboard_idle)))
    add(("KFlops", str(kflops)))
    add(("LastHeardFrom", str(NOW - rng.randrange(0, 300))))
    add(("LoadAvg", real(load_avg)))
    add(("Machine", q(host)))
    add(("MachineMaxVacateTime", "10 * 60"))
    add(("MachineResources", q("Cpus Memory Disk Swap" + (" GPUs" if gpu else ""))))
    add(("MaxJobRetirementTime", "0"))
    add(("Memory", str(memory)))
    add(("Mips", str(mips)))
    add(("MyAddress", q(sinful)))
    add(("MyCurrentTime", str(NOW)))
    add(("MyType", q("Machine")))
    add(("Name", q(f"slot1@{host}")))
    add(("NumPids", str(n_child * rng.randrange(1, 4))))
    add(("OpSys", q(opsys)))
    add(("OpSysAndVer", q(opsysver)))
    add(("OpSysLongName", q(oslong)))
    add(("OpSysMajorVer", str(osmajor)))
    add(("OpSysName", q(osname)))
    add(("OpSysVer", str(osver)))
    add(("PartitionableSlot", "true"))
    add(("Rank", rank))
    add(("RecentJobStarts", str(rng.randrange(0, 20))))
    add(("Requirements", "START && (WithinResourceLimits)"))
    add(("SlotID", "1"))
    add(("SlotType", q("Partitionable")))
    add(("SlotTypeID", "1"))
    add(("SlotWeight", "Cpus"))
    add(("START", start))
    add(("StartdIpAddr", q(sinful)))
    add(("State", q(state)))
    add(("TargetType", q("Job")))
    add(("TotalCondorLoadAvg", real(condor_load)))
    add(("TotalCpus", real(float(total_cpus))))
    add(("TotalDisk", str(total_disk)))
    add(("TotalLoadAvg", real(total_load)))
    add(("TotalMemory", str(total_mem)))
    add(("TotalSlots", str(n_child + 1)))
    add(("TotalVirtualMemory", str(total_mem * 1024 + rng.randrange(0, 8) * 1_048_576)))
    add(("UidDomain", q(DOMAIN)))
    add(("Unhibernate", "MY.MachineLastMatchTime =!= undefined"))
    add(("UpdateSequenceNumber", str(rng.randrange(1, 20000))))
    add(("UpdatesHistory", q("0x00000000000000000000000000000000")))
    add(("UpdatesTotal", str(rng.randrange(100, 20000))))
    add(("UtsnameNodename", q(host)))
    add(("UtsnameRelease", q(kernel)))
    add(("VirtualMemory", str(memory * 1024)))
    add(("WithinResourceLimits",
         WITHIN_RESOURCE_LIMITS.format(gpus=WITHIN_RESOURCE_LIMITS_GPUS if gpu else "")))
    return "".join(f"{k} = {v}\n" for k, v in a) + "\n"


def job_ad(seed: int) -> str:
    """The long-format text of the job: a vanilla-universe job as
    ``condor_submit`` writes it, with its default Requirements."""
    rng = random.Random(seed ^ 0x5EED_0B)
    owner = "alice"
    qdate = NOW - rng.randrange(600, 86400)
    a = [
        ("AccountingGroup", q(f"group_physics.{owner}")),
        ("Args", q("--events 10000 --seed 17")),
        ("ClusterId", "4242"),
        ("Cmd", q(f"/home/{owner}/analysis/run.sh")),
        ("CommittedTime", "0"),
        ("CompletionDate", "0"),
        ("CoreSize", "0"),
        ("CumulativeSlotTime", "0"),
        ("DiskUsage", "2500000"),
        ("EnteredCurrentStatus", str(qdate)),
        ("Environment", q("")),
        ("Err", q("run.err")),
        ("ExecutableSize", "75"),
        ("ExitBySignal", "false"),
        ("GlobalJobId", q(f"submit01.{DOMAIN}#4242.0#{qdate}")),
        ("ImageSize", "2500000"),
        ("In", q("/dev/null")),
        ("Iwd", q(f"/home/{owner}/analysis")),
        ("JobLeaseDuration", "2400"),
        ("JobPrio", "0"),
        ("JobStatus", "1"),
        ("JobUniverse", "5"),
        ("LeaveJobInQueue", "false"),
        ("MaxHosts", "1"),
        ("MemoryUsage", "((ResidentSetSize + 1023) / 1024)"),
        ("MinHosts", "1"),
        ("MyType", q("Job")),
        ("NumCkpts", "0"),
        ("NumJobStarts", "0"),
        ("NumRestarts", "0"),
        ("NumSystemHolds", "0"),
        ("Out", q("run.out")),
        ("Owner", q(owner)),
        ("PeriodicRemove", "false"),
        ("ProcId", "0"),
        ("QDate", str(qdate)),
        ("Rank", "TARGET.Mips"),
        ("RequestCpus", "4"),
        ("RequestDisk", "DiskUsage"),
        ("RequestMemory", "8192"),
        ("Requirements",
         '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && '
         "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
         "(TARGET.Cpus >= RequestCpus) && (TARGET.HasFileTransfer)"),
        ("ResidentSetSize", "0"),
        ("ShouldTransferFiles", q("YES")),
        ("TargetType", q("Machine")),
        ("TransferIn", "false"),
        ("TransferInputSizeMB", "12"),
        ("User", q(f"{owner}@{DOMAIN}")),
        ("WantCheckpoint", "false"),
        ("WantRemoteIO", "true"),
        ("WhenToTransferOutput", q("ON_EXIT")),
    ]
    return "".join(f"{k} = {v}\n" for k, v in a)


def write_machines(path: str, n: int, seed: int, consumption: str,
                   progress: Callable[[int], None] = lambda i: None) -> None:
    """Write ``n`` machine ads to ``path``."""
    rng = random.Random(seed)
    with open(path, "w", encoding="ascii", newline="\n") as out:
        chunk: List[str] = []
        for i in range(n):
            chunk.append(machine_ad(i, rng, consumption))
            if len(chunk) == 1000:
                out.write("".join(chunk))
                chunk.clear()
                progress(i + 1)
        out.write("".join(chunk))


def main(argv: List[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ads", type=int, default=100_000, metavar="N",
                   help="number of machine ads (default 100000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--machines", default="machines.ads", metavar="FILE",
                   help="machine ads output file (default machines.ads)")
    p.add_argument("--job", default="job.ad", metavar="FILE",
                   help="job ad output file (default job.ad)")
    p.add_argument("--consumption", choices=sorted(CONSUMPTION), default="quantize",
                   help="how the Consumption* attributes are written: HTCondor's "
                        "quantize() (default) or equivalent arithmetic")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    if args.ads < 0:
        p.error("--ads must be >= 0")

    def progress(i: int) -> None:
        if not args.quiet and i % 10000 == 0:
            print(f"generate_ads: {i}/{args.ads}", file=sys.stderr)

    with open(args.job, "w", encoding="ascii", newline="\n") as f:
        f.write(job_ad(args.seed))
    write_machines(args.machines, args.ads, args.seed, args.consumption, progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
