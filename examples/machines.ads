Name = "slot1@node00.lab.example.org"
Machine = "node00.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 8192
Disk = 524288
LoadAvg = 0.0
KeyboardIdle = 6727
Mips = 25559
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node01.lab.example.org"
Machine = "node01.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 4096
Disk = 8388608
LoadAvg = 0.05
KeyboardIdle = 307
Mips = 10816
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node02.lab.example.org"
Machine = "node02.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 32768
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 484
Mips = 26528
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node03.lab.example.org"
Machine = "node03.lab.example.org"
MyType = "Machine"
Arch = "aarch64"
OpSys = "LINUX"
Cpus = 2
Memory = 2048
Disk = 8388608
LoadAvg = 0.0
KeyboardIdle = 4727
Mips = 27187
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node04.lab.example.org"
Machine = "node04.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 16384
Disk = 8388608
LoadAvg = 0.05
KeyboardIdle = 2372
Mips = 21734
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node05.lab.example.org"
Machine = "node05.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 4
Memory = 16384
Disk = 2097152
LoadAvg = 0.05
KeyboardIdle = 844
Mips = 27057
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node06.lab.example.org"
Machine = "node06.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 131072
Disk = 524288
LoadAvg = 0.0
KeyboardIdle = 4623
Mips = 9953
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node07.lab.example.org"
Machine = "node07.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 32768
Disk = 8388608
LoadAvg = 1.2
KeyboardIdle = 6367
Mips = 18293
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node08.lab.example.org"
Machine = "node08.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 65536
Disk = 2097152
LoadAvg = 0.05
KeyboardIdle = 6507
Mips = 13890
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node09.lab.example.org"
Machine = "node09.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 4
Memory = 4096
Disk = 8388608
LoadAvg = 1.2
KeyboardIdle = 7169
Mips = 19255
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node10.lab.example.org"
Machine = "node10.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 32768
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 1351
Mips = 19208
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node11.lab.example.org"
Machine = "node11.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 4
Memory = 8192
Disk = 8388608
LoadAvg = 0.0
KeyboardIdle = 6263
Mips = 26287
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node12.lab.example.org"
Machine = "node12.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 65536
Disk = 2097152
LoadAvg = 1.2
KeyboardIdle = 4750
Mips = 22948
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node13.lab.example.org"
Machine = "node13.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 2048
Disk = 8388608
LoadAvg = 0.0
KeyboardIdle = 497
Mips = 18145
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node14.lab.example.org"
Machine = "node14.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 131072
Disk = 8388608
LoadAvg = 1.2
KeyboardIdle = 5477
Mips = 19370
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node15.lab.example.org"
Machine = "node15.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 4096
Disk = 8388608
LoadAvg = 0.0
KeyboardIdle = 4044
Mips = 9931
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node16.lab.example.org"
Machine = "node16.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 4
Memory = 8192
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 3202
Mips = 24269
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node17.lab.example.org"
Machine = "node17.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 2048
Disk = 8388608
LoadAvg = 0.4
KeyboardIdle = 1121
Mips = 22107
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node18.lab.example.org"
Machine = "node18.lab.example.org"
MyType = "Machine"
Arch = "aarch64"
OpSys = "LINUX"
Cpus = 32
Memory = 65536
Disk = 2097152
LoadAvg = 1.2
KeyboardIdle = 1890
Mips = 12945
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node19.lab.example.org"
Machine = "node19.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 2048
Disk = 8388608
LoadAvg = 0.05
KeyboardIdle = 98
Mips = 23891
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node20.lab.example.org"
Machine = "node20.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 32768
Disk = 524288
LoadAvg = 0.05
KeyboardIdle = 3432
Mips = 25517
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node21.lab.example.org"
Machine = "node21.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 32768
Disk = 524288
LoadAvg = 0.0
KeyboardIdle = 3740
Mips = 26326
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node22.lab.example.org"
Machine = "node22.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 32768
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 5196
Mips = 21121
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node23.lab.example.org"
Machine = "node23.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 2048
Disk = 2097152
LoadAvg = 0.05
KeyboardIdle = 900
Mips = 19142
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node24.lab.example.org"
Machine = "node24.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 32
Memory = 32768
Disk = 8388608
LoadAvg = 0.05
KeyboardIdle = 4395
Mips = 11324
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node25.lab.example.org"
Machine = "node25.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 32768
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 1216
Mips = 28788
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node26.lab.example.org"
Machine = "node26.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 16384
Disk = 2097152
LoadAvg = 0.0
KeyboardIdle = 944
Mips = 23993
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node27.lab.example.org"
Machine = "node27.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 32768
Disk = 524288
LoadAvg = 0.05
KeyboardIdle = 837
Mips = 19227
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node28.lab.example.org"
Machine = "node28.lab.example.org"
MyType = "Machine"
Arch = "aarch64"
OpSys = "LINUX"
Cpus = 8
Memory = 16384
Disk = 8388608
LoadAvg = 0.0
KeyboardIdle = 1681
Mips = 25309
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node29.lab.example.org"
Machine = "node29.lab.example.org"
MyType = "Machine"
Arch = "aarch64"
OpSys = "LINUX"
Cpus = 8
Memory = 8192
Disk = 524288
LoadAvg = 0.4
KeyboardIdle = 5266
Mips = 10982
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node30.lab.example.org"
Machine = "node30.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 32768
Disk = 2097152
LoadAvg = 0.05
KeyboardIdle = 4362
Mips = 25746
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node31.lab.example.org"
Machine = "node31.lab.example.org"
MyType = "Machine"
Arch = "aarch64"
OpSys = "LINUX"
Cpus = 32
Memory = 65536
Disk = 8388608
LoadAvg = 0.05
KeyboardIdle = 6603
Mips = 15844
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node32.lab.example.org"
Machine = "node32.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 65536
Disk = 8388608
LoadAvg = 1.2
KeyboardIdle = 2912
Mips = 8949
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node33.lab.example.org"
Machine = "node33.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 4096
Disk = 524288
LoadAvg = 0.4
KeyboardIdle = 3663
Mips = 19453
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node34.lab.example.org"
Machine = "node34.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 8
Memory = 8192
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 1611
Mips = 19066
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node35.lab.example.org"
Machine = "node35.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 4
Memory = 8192
Disk = 524288
LoadAvg = 1.2
KeyboardIdle = 5349
Mips = 19272
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node36.lab.example.org"
Machine = "node36.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 8192
Disk = 8388608
LoadAvg = 0.05
KeyboardIdle = 3916
Mips = 13849
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner == "alice" || TARGET.Owner == "bob")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node37.lab.example.org"
Machine = "node37.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 65536
Disk = 8388608
LoadAvg = 1.2
KeyboardIdle = 3794
Mips = 21152
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node38.lab.example.org"
Machine = "node38.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 2
Memory = 8192
Disk = 524288
LoadAvg = 0.0
KeyboardIdle = 1238
Mips = 27359
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
Requirements = START
Rank = TARGET.Owner == "alice"

Name = "slot1@node39.lab.example.org"
Machine = "node39.lab.example.org"
MyType = "Machine"
Arch = "X86_64"
OpSys = "LINUX"
Cpus = 16
Memory = 65536
Disk = 8388608
LoadAvg = 1.2
KeyboardIdle = 5384
Mips = 19482
State = "Unclaimed"
Activity = "Idle"
PartitionableSlot = true
Start = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (true)
Requirements = START
Rank = TARGET.Owner == "alice"
