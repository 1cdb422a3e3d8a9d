MyType = "Machine"
Name = "slot2@beta.example.org"
Machine = "beta.example.org"
OpSys = "LINUX"
Arch = "X86_64"
State = "Unclaimed"
Activity = "Idle"
LoadAvg = 0.0
Memory = 1963
Cpus = 1
MyCurrentTime = 1700000000
EnteredCurrentActivity = 1699999723
Requirements = START && TARGET.RequestCpus <= Cpus

MyType = "Machine"
Name = "slot1@alpha.example.org"
Machine = "alpha.example.org"
OpSys = "LINUX"
Arch = "X86_64"
State = "Claimed"
Activity = "Busy"
LoadAvg = 1.05
Memory = 512
Cpus = 4
MyCurrentTime = 1700000000
EnteredCurrentActivity = 1699906538
Requirements = START && TARGET.RequestCpus <= Cpus

MyType = "Machine"
Name = "slot1@gamma.example.org"
Machine = "gamma.example.org"
OpSys = "WINDOWS"
Arch = "INTEL"
State = "Owner"
Activity = "Idle"
LoadAvg = 0.25
Memory = 256000
Cpus = 2
LastHeardFrom = 1700000000
EnteredCurrentActivity = 1699820000
Requirements = false

MyType = "Machine"
Name = "slot1@beta.example.org"
Machine = "beta.example.org"
OpSys = "LINUX"
Arch = "X86_64"
State = "Unclaimed"
Activity = "Idle"
LoadAvg = 0.07
Memory = 1963
Cpus = 1
MyCurrentTime = 1700000000
EnteredCurrentActivity = 1700000000
Requirements = START && TARGET.RequestCpus <= Cpus

MyType = "Machine"
Name = "slot2@gamma.example.org"
Machine = "gamma.example.org"
OpSys = "WINDOWS"
Arch = "INTEL"
State = "Claimed"
Activity = "Busy"
LoadAvg = 2.0
Memory = 2048
Cpus = 2
LastHeardFrom = 1700000000
EnteredCurrentActivity = 1699996399
Requirements = false
