Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.0\"; port=9618; n=\"Internet\"; alias=\"host00000.cluster.example.org\"; spid=\"startd_18611_204f\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.alice","group_atlas.alice","group_physics.alice","group_chem.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 4,16,8,4 }
ChildMemory = { 16384,16384,16384,15872 }
ChildName = { "slot1_1@host00000.cluster.example.org","slot1_2@host00000.cluster.example.org","slot1_3@host00000.cluster.example.org","slot1_4@host00000.cluster.example.org" }
ChildRemoteOwner = { "alice@cluster.example.org","alice@cluster.example.org","alice@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 707
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: dc2574bd $"
ConsoleIdle = 1774208
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1728885256
DetectedCpus = 32
DetectedMemory = 67072
Disk = 173216240
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730840510
EnteredCurrentState = 1730840510
ExpectedMachineGracefulDrainingBadput = 4201012
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1555
KeyboardIdle = 1774085
KFlops = 3079587
LastHeardFrom = 1731999845
LoadAvg = 0.075
Machine = "host00000.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 0
Mips = 29348
MyAddress = "<10.0.0.0:9618?addrs=10.0.0.0-9618&alias=host00000.cluster.example.org&noUDP&sock=startd_18611_204f>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00000.cluster.example.org"
NumPids = 8
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 18
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 20 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.0:9618?addrs=10.0.0.0-9618&alias=host00000.cluster.example.org&noUDP&sock=startd_18611_204f>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 30.684
TotalCpus = 32.0
TotalDisk = 200000000
TotalLoadAvg = 30.759
TotalMemory = 65024
TotalSlots = 5
TotalVirtualMemory = 73924608
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 16558
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 12989
UtsnameNodename = "host00000.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.1\"; port=9618; n=\"Internet\"; alias=\"host00001.cluster.example.org\"; spid=\"startd_78201_11ad\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 1
ClockMin = 961
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: fb695ffb $"
ConsoleIdle = 2136299
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 64
CurrentRank = 0.0
DaemonStartTime = 1730724887
DetectedCpus = 64
DetectedMemory = 525312
Disk = 900000000
EnteredCurrentActivity = 1730972979
EnteredCurrentState = 1730972979
ExpectedMachineGracefulDrainingBadput = 4599796
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4733
KeyboardIdle = 2136095
KFlops = 2554084
LastHeardFrom = 1731999820
LoadAvg = 0.018
Machine = "host00001.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 523264
Mips = 27886
MyAddress = "<10.0.0.1:9618?addrs=10.0.0.1-9618&alias=host00001.cluster.example.org&noUDP&sock=startd_78201_11ad>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00001.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 8
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_atlas" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "carol") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.1:9618?addrs=10.0.0.1-9618&alias=host00001.cluster.example.org&noUDP&sock=startd_78201_11ad>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 64.0
TotalDisk = 900000000
TotalLoadAvg = 0.018
TotalMemory = 523264
TotalSlots = 1
TotalVirtualMemory = 535822336
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 12573
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 16893
UtsnameNodename = "host00001.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 535822336
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.2\"; port=9618; n=\"Internet\"; alias=\"host00002.cluster.example.org\"; spid=\"startd_17940_6935\"; noUDP=true; ]}"
Arch = "aarch64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.carol","group_bio.carol","group_bio.bob","group_cms.erin" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 4,1,8,16 }
ChildMemory = { 8192,4096,32768,65536 }
ChildName = { "slot1_1@host00002.cluster.example.org","slot1_2@host00002.cluster.example.org","slot1_3@host00002.cluster.example.org","slot1_4@host00002.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 511
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: aarch64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 526eb523 $"
ConsoleIdle = 3242
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 3
CurrentRank = 0.0
DaemonStartTime = 1728059535
DetectedCpus = 32
DetectedMemory = 262144
Disk = 1760873066
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730418383
EnteredCurrentState = 1730418383
ExpectedMachineGracefulDrainingBadput = 3242676
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2116
KeyboardIdle = 2757
KFlops = 1061068
LastHeardFrom = 1731999945
LoadAvg = 0.81
Machine = "host00002.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 151040
Mips = 29843
MyAddress = "<10.0.0.2:9618?addrs=10.0.0.2-9618&alias=host00002.cluster.example.org&noUDP&sock=startd_17940_6935>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00002.cluster.example.org"
NumPids = 8
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.2:9618?addrs=10.0.0.2-9618&alias=host00002.cluster.example.org&noUDP&sock=startd_17940_6935>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 24.956
TotalCpus = 32.0
TotalDisk = 1800000000
TotalLoadAvg = 25.766
TotalMemory = 261632
TotalSlots = 5
TotalVirtualMemory = 271056896
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 19846
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 14244
UtsnameNodename = "host00002.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.aarch64"
VirtualMemory = 154664960
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.3\"; port=9618; n=\"Internet\"; alias=\"host00003.cluster.example.org\"; spid=\"startd_3728_7364\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.alice","group_physics.bob","group_physics.carol","group_bio.carol","group_physics.carol","group_atlas.dave","group_physics.erin","group_physics.frank","group_cms.erin","group_physics.frank","group_physics.frank","group_chem.frank","group_chem.bob","group_atlas.erin","group_cms.dave","group_chem.heidi","group_physics.carol","group_cms.bob","group_chem.frank","group_chem.alice","group_chem.grace","group_physics.bob","group_cms.grace","group_cms.carol","group_atlas.carol","group_bio.frank","group_atlas.bob" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 2,8,4,8,8,4,8,2,1,1,4,8,4,4,1,16,8,8,2,8,1,2,1,8,4,2,1 }
ChildMemory = { 8192,8192,16384,16384,32768,4096,16384,2048,2048,1024,8192,8192,16384,4096,4096,16384,8192,16384,8192,32768,2048,4096,1024,32768,16384,4096,4096 }
ChildName = { "slot1_1@host00003.cluster.example.org","slot1_2@host00003.cluster.example.org","slot1_3@host00003.cluster.example.org","slot1_4@host00003.cluster.example.org","slot1_5@host00003.cluster.example.org","slot1_6@host00003.cluster.example.org","slot1_7@host00003.cluster.example.org","slot1_8@host00003.cluster.example.org","slot1_9@host00003.cluster.example.org","slot1_10@host00003.cluster.example.org","slot1_11@host00003.cluster.example.org","slot1_12@host00003.cluster.example.org","slot1_13@host00003.cluster.example.org","slot1_14@host00003.cluster.example.org","slot1_15@host00003.cluster.example.org","slot1_16@host00003.cluster.example.org","slot1_17@host00003.cluster.example.org","slot1_18@host00003.cluster.example.org","slot1_19@host00003.cluster.example.org","slot1_20@host00003.cluster.example.org","slot1_21@host00003.cluster.example.org","slot1_22@host00003.cluster.example.org","slot1_23@host00003.cluster.example.org","slot1_24@host00003.cluster.example.org","slot1_25@host00003.cluster.example.org","slot1_26@host00003.cluster.example.org","slot1_27@host00003.cluster.example.org" }
ChildRemoteOwner = { "alice@cluster.example.org","bob@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org","erin@cluster.example.org","frank@cluster.example.org","erin@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org","frank@cluster.example.org","alice@cluster.example.org","grace@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 546
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: b62c228e $"
ConsoleIdle = 3283463
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1730127311
DetectedCpus = 128
DetectedMemory = 523776
Disk = 134944365
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730813023
EnteredCurrentState = 1730813023
ExpectedMachineGracefulDrainingBadput = 2662681
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2421
KeyboardIdle = 3283141
KFlops = 1938324
LastHeardFrom = 1731999837
LoadAvg = 0.008
Machine = "host00003.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 228352
Mips = 33031
MyAddress = "<10.0.0.3:9618?addrs=10.0.0.3-9618&alias=host00003.cluster.example.org&noUDP&sock=startd_3728_7364>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00003.cluster.example.org"
NumPids = 54
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.3:9618?addrs=10.0.0.3-9618&alias=host00003.cluster.example.org&noUDP&sock=startd_3728_7364>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 126.582
TotalCpus = 128.0
TotalDisk = 450000000
TotalLoadAvg = 126.59
TotalMemory = 523264
TotalSlots = 28
TotalVirtualMemory = 541065216
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 13060
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 2163
UtsnameNodename = "host00003.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 233832448
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.4\"; port=9618; n=\"Internet\"; alias=\"host00004.cluster.example.org\"; spid=\"startd_9413_a27b\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.carol","group_atlas.carol","group_physics.frank","group_physics.erin","group_bio.bob","group_atlas.erin","group_chem.carol","group_atlas.dave","group_chem.carol","group_chem.alice","group_bio.frank","group_bio.dave","group_cms.carol","group_atlas.erin","group_cms.grace","group_chem.carol","group_atlas.alice","group_physics.dave","group_chem.erin","group_cms.bob" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 2,2,2,4,16,1,1,8,4,4,1,2,16,4,4,8,8,1,2,16 }
ChildMemory = { 8192,4096,2048,4096,32768,2048,4096,32768,4096,8192,2048,4096,65536,4096,4096,32768,32768,1024,2048,16384 }
ChildName = { "slot1_1@host00004.cluster.example.org","slot1_2@host00004.cluster.example.org","slot1_3@host00004.cluster.example.org","slot1_4@host00004.cluster.example.org","slot1_5@host00004.cluster.example.org","slot1_6@host00004.cluster.example.org","slot1_7@host00004.cluster.example.org","slot1_8@host00004.cluster.example.org","slot1_9@host00004.cluster.example.org","slot1_10@host00004.cluster.example.org","slot1_11@host00004.cluster.example.org","slot1_12@host00004.cluster.example.org","slot1_13@host00004.cluster.example.org","slot1_14@host00004.cluster.example.org","slot1_15@host00004.cluster.example.org","slot1_16@host00004.cluster.example.org","slot1_17@host00004.cluster.example.org","slot1_18@host00004.cluster.example.org","slot1_19@host00004.cluster.example.org","slot1_20@host00004.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","carol@cluster.example.org","frank@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org","carol@cluster.example.org","alice@cluster.example.org","frank@cluster.example.org","dave@cluster.example.org","carol@cluster.example.org","erin@cluster.example.org","grace@cluster.example.org","carol@cluster.example.org","alice@cluster.example.org","dave@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 0
ClockMin = 928
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: eba1a9d3 $"
ConsoleIdle = 1877405
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 22
CurrentRank = 0.0
DaemonStartTime = 1725701077
DetectedCpus = 128
DetectedMemory = 523776
Disk = 708644973
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730214650
EnteredCurrentState = 1730214650
ExpectedMachineGracefulDrainingBadput = 4016691
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2760
KeyboardIdle = 1877174
KFlops = 2842972
LastHeardFrom = 1731999714
LoadAvg = 0.08
Machine = "host00004.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 256000
Mips = 32739
MyAddress = "<10.0.0.4:9618?addrs=10.0.0.4-9618&alias=host00004.cluster.example.org&noUDP&sock=startd_9413_a27b>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00004.cluster.example.org"
NumPids = 60
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 8
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_chem" || TARGET.AccountingGroup == "group_bio" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "heidi") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.4:9618?addrs=10.0.0.4-9618&alias=host00004.cluster.example.org&noUDP&sock=startd_9413_a27b>"
State = "Owner"
TargetType = "Job"
TotalCondorLoadAvg = 102.951
TotalCpus = 128.0
TotalDisk = 900000000
TotalLoadAvg = 103.031
TotalMemory = 523264
TotalSlots = 21
TotalVirtualMemory = 538968064
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 1580
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 2444
UtsnameNodename = "host00004.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 262144000
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.5\"; port=9618; n=\"Internet\"; alias=\"host00005.cluster.example.org\"; spid=\"startd_68068_bcc4\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.alice","group_cms.bob","group_atlas.erin","group_atlas.bob","group_cms.erin","group_physics.bob","group_bio.carol" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,16,8,8,2,4,2 }
ChildMemory = { 8192,16384,32768,16384,2048,8192,8192 }
ChildName = { "slot1_1@host00005.cluster.example.org","slot1_2@host00005.cluster.example.org","slot1_3@host00005.cluster.example.org","slot1_4@host00005.cluster.example.org","slot1_5@host00005.cluster.example.org","slot1_6@host00005.cluster.example.org","slot1_7@host00005.cluster.example.org" }
ChildRemoteOwner = { "alice@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org","carol@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 783
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 3f8b1baa $"
ConsoleIdle = 2591649
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729045012
DetectedCpus = 48
DetectedMemory = 393216
Disk = 364060572
EnteredCurrentActivity = 1731066585
EnteredCurrentState = 1731066585
ExpectedMachineGracefulDrainingBadput = 4432231
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4961
KeyboardIdle = 2591077
KFlops = 1343967
LastHeardFrom = 1731999876
LoadAvg = 0.108
Machine = "host00005.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 300544
Mips = 37950
MyAddress = "<10.0.0.5:9618?addrs=10.0.0.5-9618&alias=host00005.cluster.example.org&noUDP&sock=startd_68068_bcc4>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00005.cluster.example.org"
NumPids = 14
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 6
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "carol")
StartdIpAddr = "<10.0.0.5:9618?addrs=10.0.0.5-9618&alias=host00005.cluster.example.org&noUDP&sock=startd_68068_bcc4>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 46.862
TotalCpus = 48.0
TotalDisk = 450000000
TotalLoadAvg = 46.97
TotalMemory = 392704
TotalSlots = 8
TotalVirtualMemory = 404226048
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 9332
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 4963
UtsnameNodename = "host00005.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 307757056
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.6\"; port=9618; n=\"Internet\"; alias=\"host00006.cluster.example.org\"; spid=\"startd_72085_66a1\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.erin","group_bio.bob" }
ChildActivity = { "Busy","Busy" }
ChildCpus = { 16,8 }
ChildMemory = { 16384,8192 }
ChildName = { "slot1_1@host00006.cluster.example.org","slot1_2@host00006.cluster.example.org" }
ChildRemoteOwner = { "erin@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed" }
ClockDay = 2
ClockMin = 153
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 8a0f4283 $"
ConsoleIdle = 105242
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729440808
DetectedCpus = 24
DetectedMemory = 198144
Disk = 1778267373
EnteredCurrentActivity = 1730586641
EnteredCurrentState = 1730586641
ExpectedMachineGracefulDrainingBadput = 4129704
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3132
KeyboardIdle = 104895
KFlops = 2243244
LastHeardFrom = 1731999896
LoadAvg = 0.138
Machine = "host00006.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 171520
Mips = 32867
MyAddress = "<10.0.0.6:9618?addrs=10.0.0.6-9618&alias=host00006.cluster.example.org&noUDP&sock=startd_72085_66a1>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00006.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 0
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.6:9618?addrs=10.0.0.6-9618&alias=host00006.cluster.example.org&noUDP&sock=startd_72085_66a1>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 20.825
TotalCpus = 24.0
TotalDisk = 1800000000
TotalLoadAvg = 20.963
TotalMemory = 196096
TotalSlots = 3
TotalVirtualMemory = 204996608
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 19601
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 16843
UtsnameNodename = "host00006.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 175636480
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.7\"; port=9618; n=\"Internet\"; alias=\"host00007.cluster.example.org\"; spid=\"startd_27067_ec54\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.carol","group_atlas.grace","group_cms.erin","group_physics.carol","group_bio.bob","group_physics.alice" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,1,4,4,4,8 }
ChildMemory = { 16384,4096,16384,8192,16384,32768 }
ChildName = { "slot1_1@host00007.cluster.example.org","slot1_2@host00007.cluster.example.org","slot1_3@host00007.cluster.example.org","slot1_4@host00007.cluster.example.org","slot1_5@host00007.cluster.example.org","slot1_6@host00007.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","grace@cluster.example.org","erin@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org","alice@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 946
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 714699bd $"
ConsoleIdle = 1113510
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 23
CurrentRank = 0.0
DaemonStartTime = 1730087446
DetectedCpus = 48
DetectedMemory = 148992
Disk = 3542771094
EnteredCurrentActivity = 1731363101
EnteredCurrentState = 1731363101
ExpectedMachineGracefulDrainingBadput = 1355826
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2259
KeyboardIdle = 1113342
KFlops = 3282736
LastHeardFrom = 1731999845
LoadAvg = 0.053
Machine = "host00007.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 52736
Mips = 37447
MyAddress = "<10.0.0.7:9618?addrs=10.0.0.7-9618&alias=host00007.cluster.example.org&noUDP&sock=startd_27067_ec54>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00007.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.7:9618?addrs=10.0.0.7-9618&alias=host00007.cluster.example.org&noUDP&sock=startd_27067_ec54>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 24.244
TotalCpus = 48.0
TotalDisk = 3600000000
TotalLoadAvg = 24.297
TotalMemory = 146944
TotalSlots = 7
TotalVirtualMemory = 153616384
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 7774
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 11042
UtsnameNodename = "host00007.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 54001664
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.8\"; port=9618; n=\"Internet\"; alias=\"host00008.cluster.example.org\"; spid=\"startd_36267_2319\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.carol","group_atlas.heidi","group_chem.erin","group_atlas.frank" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 4,8,16,4 }
ChildMemory = { 16384,32768,65536,8192 }
ChildName = { "slot1_1@host00008.cluster.example.org","slot1_2@host00008.cluster.example.org","slot1_3@host00008.cluster.example.org","slot1_4@host00008.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org","frank@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 648
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 299bf22d $"
ConsoleIdle = 1089090
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 96
CurrentRank = 0.0
DaemonStartTime = 1726836405
DetectedCpus = 128
DetectedMemory = 1049600
Disk = 142801687
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730213645
EnteredCurrentState = 1730213645
ExpectedMachineGracefulDrainingBadput = 2598470
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1689
KeyboardIdle = 1088949
KFlops = 1128070
LastHeardFrom = 1731999844
LoadAvg = 0.123
Machine = "host00008.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 924672
Mips = 36654
MyAddress = "<10.0.0.8:9618?addrs=10.0.0.8-9618&alias=host00008.cluster.example.org&noUDP&sock=startd_36267_2319>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00008.cluster.example.org"
NumPids = 4
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_atlas.alice") * 5
RecentJobStarts = 3
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.8:9618?addrs=10.0.0.8-9618&alias=host00008.cluster.example.org&noUDP&sock=startd_36267_2319>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 31.826
TotalCpus = 128.0
TotalDisk = 200000000
TotalLoadAvg = 31.949
TotalMemory = 1047552
TotalSlots = 5
TotalVirtualMemory = 1075838976
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 13010
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 10630
UtsnameNodename = "host00008.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 946864128
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.9\"; port=9618; n=\"Internet\"; alias=\"host00009.cluster.example.org\"; spid=\"startd_65534_332f\"; noUDP=true; ]}"
Arch = "aarch64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.erin","group_physics.heidi","group_physics.grace","group_cms.dave","group_chem.heidi","group_atlas.erin" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,16,1,8,1,2 }
ChildMemory = { 16384,32768,4096,8192,1024,2048 }
ChildName = { "slot1_1@host00009.cluster.example.org","slot1_2@host00009.cluster.example.org","slot1_3@host00009.cluster.example.org","slot1_4@host00009.cluster.example.org","slot1_5@host00009.cluster.example.org","slot1_6@host00009.cluster.example.org" }
ChildRemoteOwner = { "erin@cluster.example.org","heidi@cluster.example.org","grace@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 0
ClockMin = 983
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: aarch64-CentOS_7 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 909311ed $"
ConsoleIdle = 2493676
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1731923770
DetectedCpus = 32
DetectedMemory = 65536
Disk = 3528274163
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731967620
EnteredCurrentState = 1731967620
ExpectedMachineGracefulDrainingBadput = 2545116
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 498
KeyboardIdle = 2493416
KFlops = 1193852
LastHeardFrom = 1731999732
LoadAvg = 0.024
Machine = "host00009.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 512
Mips = 17583
MyAddress = "<10.0.0.9:9618?addrs=10.0.0.9-9618&alias=host00009.cluster.example.org&noUDP&sock=startd_65534_332f>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00009.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 1
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.9:9618?addrs=10.0.0.9-9618&alias=host00009.cluster.example.org&noUDP&sock=startd_65534_332f>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 27.733
TotalCpus = 32.0
TotalDisk = 3600000000
TotalLoadAvg = 27.757
TotalMemory = 65024
TotalSlots = 7
TotalVirtualMemory = 70778880
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 3849
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 14272
UtsnameNodename = "host00009.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.aarch64"
VirtualMemory = 524288
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.10\"; port=9618; n=\"Internet\"; alias=\"host00010.cluster.example.org\"; spid=\"startd_12932_6156\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.grace","group_chem.dave","group_atlas.grace","group_physics.bob","group_cms.erin" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,8,2,8,2 }
ChildMemory = { 16384,8192,2048,32768,4096 }
ChildName = { "slot1_1@host00010.cluster.example.org","slot1_2@host00010.cluster.example.org","slot1_3@host00010.cluster.example.org","slot1_4@host00010.cluster.example.org","slot1_5@host00010.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","dave@cluster.example.org","grace@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 416
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: e1df6f91 $"
ConsoleIdle = 3028201
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 8
CurrentRank = 0.0
DaemonStartTime = 1731190763
DetectedCpus = 32
DetectedMemory = 132608
Disk = 830409887
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731683250
EnteredCurrentState = 1731683250
ExpectedMachineGracefulDrainingBadput = 758133
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2472
KeyboardIdle = 3028176
KFlops = 1405032
LastHeardFrom = 1731999983
LoadAvg = 0.008
Machine = "host00010.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 67072
Mips = 20818
MyAddress = "<10.0.0.10:9618?addrs=10.0.0.10-9618&alias=host00010.cluster.example.org&noUDP&sock=startd_12932_6156>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00010.cluster.example.org"
NumPids = 10
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 1
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 5 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.10:9618?addrs=10.0.0.10-9618&alias=host00010.cluster.example.org&noUDP&sock=startd_12932_6156>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 23.901
TotalCpus = 32.0
TotalDisk = 900000000
TotalLoadAvg = 23.909
TotalMemory = 130560
TotalSlots = 6
TotalVirtualMemory = 137887744
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 10264
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 4360
UtsnameNodename = "host00010.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 68681728
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.11\"; port=9618; n=\"Internet\"; alias=\"host00011.cluster.example.org\"; spid=\"startd_35118_c2a7\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_atlas.alice","group_atlas.erin","group_physics.carol","group_atlas.dave" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 4,16,8,1 }
ChildMemory = { 16384,32768,16384,1024 }
ChildName = { "slot1_1@host00011.cluster.example.org","slot1_2@host00011.cluster.example.org","slot1_3@host00011.cluster.example.org","slot1_4@host00011.cluster.example.org" }
ChildRemoteOwner = { "alice@cluster.example.org","erin@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 0
ClockMin = 615
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 2614e7e7 $"
ConsoleIdle = 2189491
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 3
CurrentRank = 0.0
DaemonStartTime = 1731498383
DetectedCpus = 32
DetectedMemory = 262144
Disk = 377177078
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731863913
EnteredCurrentState = 1731863913
ExpectedMachineGracefulDrainingBadput = 3790088
FileSystemDomain = "cluster.example.org"
HasFileTransfer = false
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2983
KeyboardIdle = 2189158
KFlops = 3411329
LastHeardFrom = 1731999806
LoadAvg = 0.053
Machine = "host00011.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 194560
Mips = 19140
MyAddress = "<10.0.0.11:9618?addrs=10.0.0.11-9618&alias=host00011.cluster.example.org&noUDP&sock=startd_35118_c2a7>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00011.cluster.example.org"
NumPids = 4
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 18
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.11:9618?addrs=10.0.0.11-9618&alias=host00011.cluster.example.org&noUDP&sock=startd_35118_c2a7>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 26.06
TotalCpus = 32.0
TotalDisk = 450000000
TotalLoadAvg = 26.113
TotalMemory = 261120
TotalSlots = 5
TotalVirtualMemory = 267386880
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 4410
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 1696
UtsnameNodename = "host00011.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 199229440
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.12\"; port=9618; n=\"Internet\"; alias=\"host00012.cluster.example.org\"; spid=\"startd_69643_fbfe\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_atlas.bob","group_cms.dave","group_atlas.carol","group_cms.grace","group_physics.alice","group_cms.frank","group_atlas.heidi","group_atlas.erin","group_atlas.dave","group_atlas.dave" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,8,8,2,2,8,8,1,16,7 }
ChildMemory = { 8192,16384,32768,2048,4096,8192,8192,1024,32768,28672 }
ChildName = { "slot1_1@host00012.cluster.example.org","slot1_2@host00012.cluster.example.org","slot1_3@host00012.cluster.example.org","slot1_4@host00012.cluster.example.org","slot1_5@host00012.cluster.example.org","slot1_6@host00012.cluster.example.org","slot1_7@host00012.cluster.example.org","slot1_8@host00012.cluster.example.org","slot1_9@host00012.cluster.example.org","slot1_10@host00012.cluster.example.org" }
ChildRemoteOwner = { "bob@cluster.example.org","dave@cluster.example.org","carol@cluster.example.org","grace@cluster.example.org","alice@cluster.example.org","frank@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org","dave@cluster.example.org","dave@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 3
ClockMin = 386
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 0a453e8c $"
ConsoleIdle = 3634211
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1726662552
DetectedCpus = 64
DetectedMemory = 261632
Disk = 815999334
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731229950
EnteredCurrentState = 1731229950
ExpectedMachineGracefulDrainingBadput = 2511165
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4430
KeyboardIdle = 3633742
KFlops = 3833673
LastHeardFrom = 1731999939
LoadAvg = 0.027
Machine = "host00012.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 118784
Mips = 29817
MyAddress = "<10.0.0.12:9618?addrs=10.0.0.12-9618&alias=host00012.cluster.example.org&noUDP&sock=startd_69643_fbfe>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00012.cluster.example.org"
NumPids = 20
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_bio" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "dave") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.12:9618?addrs=10.0.0.12-9618&alias=host00012.cluster.example.org&noUDP&sock=startd_69643_fbfe>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 63.029
TotalCpus = 64.0
TotalDisk = 900000000
TotalLoadAvg = 63.056
TotalMemory = 261120
TotalSlots = 11
TotalVirtualMemory = 272629760
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 17794
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 18842
UtsnameNodename = "host00012.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 121634816
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.13\"; port=9618; n=\"Internet\"; alias=\"host00013.cluster.example.org\"; spid=\"startd_73270_90a4\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.erin","group_chem.heidi","group_cms.erin","group_cms.frank","group_cms.heidi","group_physics.frank","group_physics.grace","group_chem.heidi","group_chem.bob" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,2,4,2,16,4,1,8,8 }
ChildMemory = { 8192,8192,16384,8192,16384,16384,2048,32768,8192 }
ChildName = { "slot1_1@host00013.cluster.example.org","slot1_2@host00013.cluster.example.org","slot1_3@host00013.cluster.example.org","slot1_4@host00013.cluster.example.org","slot1_5@host00013.cluster.example.org","slot1_6@host00013.cluster.example.org","slot1_7@host00013.cluster.example.org","slot1_8@host00013.cluster.example.org","slot1_9@host00013.cluster.example.org" }
ChildRemoteOwner = { "erin@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org","frank@cluster.example.org","heidi@cluster.example.org","frank@cluster.example.org","grace@cluster.example.org","heidi@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 1
ClockMin = 1207
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 06b0da21 $"
ConsoleIdle = 610754
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 15
CurrentRank = 0.0
DaemonStartTime = 1730162331
DetectedCpus = 64
DetectedMemory = 523776
Disk = 3521877924
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731228679
EnteredCurrentState = 1731228679
ExpectedMachineGracefulDrainingBadput = 830072
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 24
KeyboardIdle = 610495
KFlops = 2091496
LastHeardFrom = 1731999955
LoadAvg = 0.002
Machine = "host00013.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 406528
Mips = 20638
MyAddress = "<10.0.0.13:9618?addrs=10.0.0.13-9618&alias=host00013.cluster.example.org&noUDP&sock=startd_73270_90a4>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00013.cluster.example.org"
NumPids = 18
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 19
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.13:9618?addrs=10.0.0.13-9618&alias=host00013.cluster.example.org&noUDP&sock=startd_73270_90a4>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 44.702
TotalCpus = 64.0
TotalDisk = 3600000000
TotalLoadAvg = 44.704
TotalMemory = 523264
TotalSlots = 10
TotalVirtualMemory = 535822336
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 18010
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 7252
UtsnameNodename = "host00013.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 416284672
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.14\"; port=9618; n=\"Internet\"; alias=\"host00014.cluster.example.org\"; spid=\"startd_71056_d800\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.frank","group_chem.heidi","group_cms.bob","group_bio.alice","group_atlas.frank","group_cms.erin","group_chem.alice","group_bio.heidi","group_chem.erin","group_atlas.bob","group_chem.dave","group_atlas.erin","group_cms.erin" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,2,16,16,16,8,1,1,4,8,4,1,16 }
ChildMemory = { 16384,4096,65536,16384,16384,32768,2048,4096,8192,32768,8192,4096,32768 }
ChildName = { "slot1_1@host00014.cluster.example.org","slot1_2@host00014.cluster.example.org","slot1_3@host00014.cluster.example.org","slot1_4@host00014.cluster.example.org","slot1_5@host00014.cluster.example.org","slot1_6@host00014.cluster.example.org","slot1_7@host00014.cluster.example.org","slot1_8@host00014.cluster.example.org","slot1_9@host00014.cluster.example.org","slot1_10@host00014.cluster.example.org","slot1_11@host00014.cluster.example.org","slot1_12@host00014.cluster.example.org","slot1_13@host00014.cluster.example.org" }
ChildRemoteOwner = { "frank@cluster.example.org","heidi@cluster.example.org","bob@cluster.example.org","alice@cluster.example.org","frank@cluster.example.org","erin@cluster.example.org","alice@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org","dave@cluster.example.org","erin@cluster.example.org","erin@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 1091
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 264103c5 $"
ConsoleIdle = 1730672
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 27
CurrentRank = 0.0
DaemonStartTime = 1730188535
DetectedCpus = 128
DetectedMemory = 524288
Disk = 43326216
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730678680
EnteredCurrentState = 1730678680
ExpectedMachineGracefulDrainingBadput = 1133027
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1746
KeyboardIdle = 1730156
KFlops = 3352372
LastHeardFrom = 1731999839
LoadAvg = 0.03
Machine = "host00014.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 279552
Mips = 28360
MyAddress = "<10.0.0.14:9618?addrs=10.0.0.14-9618&alias=host00014.cluster.example.org&noUDP&sock=startd_71056_d800>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00014.cluster.example.org"
NumPids = 39
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "erin",10,0)
RecentJobStarts = 15
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_bio" || TARGET.AccountingGroup == "group_atlas" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "heidi") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.14:9618?addrs=10.0.0.14-9618&alias=host00014.cluster.example.org&noUDP&sock=startd_71056_d800>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 88.097
TotalCpus = 128.0
TotalDisk = 200000000
TotalLoadAvg = 88.127
TotalMemory = 523264
TotalSlots = 14
TotalVirtualMemory = 543162368
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 10815
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3979
UtsnameNodename = "host00014.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 286261248
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.15\"; port=9618; n=\"Internet\"; alias=\"host00015.cluster.example.org\"; spid=\"startd_17767_47bd\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.erin" }
ChildActivity = { "Busy" }
ChildCpus = { 8 }
ChildMemory = { 8192 }
ChildName = { "slot1_1@host00015.cluster.example.org" }
ChildRemoteOwner = { "erin@cluster.example.org" }
ChildState = { "Claimed" }
ClockDay = 0
ClockMin = 573
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: c51d7956 $"
ConsoleIdle = 21956
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729939265
DetectedCpus = 8
DetectedMemory = 66048
Disk = 182121558
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731822594
EnteredCurrentState = 1731822594
ExpectedMachineGracefulDrainingBadput = 770242
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2597
KeyboardIdle = 21369
KFlops = 1923864
LastHeardFrom = 1731999873
LoadAvg = 0.172
Machine = "host00015.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 57344
Mips = 35164
MyAddress = "<10.0.0.15:9618?addrs=10.0.0.15-9618&alias=host00015.cluster.example.org&noUDP&sock=startd_17767_47bd>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00015.cluster.example.org"
NumPids = 2
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.15:9618?addrs=10.0.0.15-9618&alias=host00015.cluster.example.org&noUDP&sock=startd_17767_47bd>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 7.729
TotalCpus = 8.0
TotalDisk = 200000000
TotalLoadAvg = 7.901
TotalMemory = 65536
TotalSlots = 2
TotalVirtualMemory = 67108864
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 11855
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 1121
UtsnameNodename = "host00015.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 58720256
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.16\"; port=9618; n=\"Internet\"; alias=\"host00016.cluster.example.org\"; spid=\"startd_11265_472f\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.grace","group_chem.bob" }
ChildActivity = { "Busy","Busy" }
ChildCpus = { 1,15 }
ChildMemory = { 2048,61440 }
ChildName = { "slot1_1@host00016.cluster.example.org","slot1_2@host00016.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed" }
ClockDay = 1
ClockMin = 616
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: e5b0fcb2 $"
ConsoleIdle = 2607021
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1726738228
DetectedCpus = 16
DetectedMemory = 67072
Disk = 184679571
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730041416
EnteredCurrentState = 1730041416
ExpectedMachineGracefulDrainingBadput = 4520058
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3876
KeyboardIdle = 2606740
KFlops = 3247148
LastHeardFrom = 1731999936
LoadAvg = 0.065
Machine = "host00016.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 1536
Mips = 28720
MyAddress = "<10.0.0.16:9618?addrs=10.0.0.16-9618&alias=host00016.cluster.example.org&noUDP&sock=startd_11265_472f>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00016.cluster.example.org"
NumPids = 4
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "bob",10,0)
RecentJobStarts = 3
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.16:9618?addrs=10.0.0.16-9618&alias=host00016.cluster.example.org&noUDP&sock=startd_11265_472f>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 15.341
TotalCpus = 16.0
TotalDisk = 200000000
TotalLoadAvg = 15.406
TotalMemory = 65024
TotalSlots = 3
TotalVirtualMemory = 71827456
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 2264
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 17932
UtsnameNodename = "host00016.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 1572864
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.17\"; port=9618; n=\"Internet\"; alias=\"host00017.cluster.example.org\"; spid=\"startd_48597_0f92\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.bob","group_cms.carol" }
ChildActivity = { "Busy","Busy" }
ChildCpus = { 2,16 }
ChildMemory = { 2048,32768 }
ChildName = { "slot1_1@host00017.cluster.example.org","slot1_2@host00017.cluster.example.org" }
ChildRemoteOwner = { "bob@cluster.example.org","carol@cluster.example.org" }
ChildState = { "Claimed","Claimed" }
ClockDay = 4
ClockMin = 1316
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 7644d38c $"
ConsoleIdle = 2800795
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 6
CurrentRank = 0.0
DaemonStartTime = 1729921394
DetectedCpus = 24
DetectedMemory = 74240
Disk = 869634504
EnteredCurrentActivity = 1730002749
EnteredCurrentState = 1730002749
ExpectedMachineGracefulDrainingBadput = 4951
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_d4ee8f76,GPUs_GPU_965f4712,GPUs_GPU_c361442e,GPUs_GPU_8d103fa1 }
CUDACapability = 8.0
CUDAClockMhz = 1380.0
CUDAComputeUnits = 108
CUDACoresPerCU = 64
CUDADeviceName = "NVIDIA A100-SXM4-40GB"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 40338
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-d4ee8f76, GPU-965f4712, GPU-c361442e, GPU-8d103fa1"
GPUs = 3
GPUsMemoryUsage = undefined
GPUs_GPU_d4ee8f76 = [ Id = "GPU-d4ee8f76"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_965f4712 = [ Id = "GPU-965f4712"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_c361442e = [ Id = "GPU-c361442e"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_8d103fa1 = [ Id = "GPU-8d103fa1"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
TotalGPUs = 4
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3882
KeyboardIdle = 2800694
KFlops = 3253512
LastHeardFrom = 1731999875
LoadAvg = 0.102
Machine = "host00017.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 38400
Mips = 15268
MyAddress = "<10.0.0.17:9618?addrs=10.0.0.17-9618&alias=host00017.cluster.example.org&noUDP&sock=startd_48597_0f92>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00017.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 7
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 5 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.17:9618?addrs=10.0.0.17-9618&alias=host00017.cluster.example.org&noUDP&sock=startd_48597_0f92>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 17.155
TotalCpus = 24.0
TotalDisk = 900000000
TotalLoadAvg = 17.257
TotalMemory = 73216
TotalSlots = 3
TotalVirtualMemory = 76021760
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 18428
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 11821
UtsnameNodename = "host00017.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 39321600
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.18\"; port=9618; n=\"Internet\"; alias=\"host00018.cluster.example.org\"; spid=\"startd_21795_3b99\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.heidi","group_chem.heidi","group_atlas.frank","group_cms.heidi","group_physics.dave","group_atlas.grace","group_chem.heidi","group_cms.grace","group_chem.bob","group_chem.heidi","group_bio.erin","group_chem.carol","group_physics.carol" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,4,16,4,2,8,2,4,1,2,8,4,5 }
ChildMemory = { 8192,8192,32768,16384,8192,32768,2048,16384,4096,8192,32768,8192,20480 }
ChildName = { "slot1_1@host00018.cluster.example.org","slot1_2@host00018.cluster.example.org","slot1_3@host00018.cluster.example.org","slot1_4@host00018.cluster.example.org","slot1_5@host00018.cluster.example.org","slot1_6@host00018.cluster.example.org","slot1_7@host00018.cluster.example.org","slot1_8@host00018.cluster.example.org","slot1_9@host00018.cluster.example.org","slot1_10@host00018.cluster.example.org","slot1_11@host00018.cluster.example.org","slot1_12@host00018.cluster.example.org","slot1_13@host00018.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","heidi@cluster.example.org","frank@cluster.example.org","heidi@cluster.example.org","dave@cluster.example.org","grace@cluster.example.org","heidi@cluster.example.org","grace@cluster.example.org","bob@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 1366
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 2933eb1c $"
ConsoleIdle = 2082
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1727875122
DetectedCpus = 64
DetectedMemory = 263168
Disk = 77159664
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731037773
EnteredCurrentState = 1731037773
ExpectedMachineGracefulDrainingBadput = 1819178
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4224
KeyboardIdle = 1698
KFlops = 1767413
LastHeardFrom = 1731999903
LoadAvg = 0.011
Machine = "host00018.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 62464
Mips = 17444
MyAddress = "<10.0.0.18:9618?addrs=10.0.0.18-9618&alias=host00018.cluster.example.org&noUDP&sock=startd_21795_3b99>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00018.cluster.example.org"
NumPids = 39
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_chem" || TARGET.AccountingGroup == "group_physics" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "erin") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.18:9618?addrs=10.0.0.18-9618&alias=host00018.cluster.example.org&noUDP&sock=startd_21795_3b99>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 55.446
TotalCpus = 64.0
TotalDisk = 200000000
TotalLoadAvg = 55.457
TotalMemory = 261120
TotalSlots = 14
TotalVirtualMemory = 268435456
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 8124
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 13147
UtsnameNodename = "host00018.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 63963136
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.19\"; port=9618; n=\"Internet\"; alias=\"host00019.cluster.example.org\"; spid=\"startd_61941_3cf9\"; noUDP=true; ]}"
Arch = "aarch64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 6
ClockMin = 1150
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: aarch64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 3362591e $"
ConsoleIdle = 3804
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 96
CurrentRank = 0.0
DaemonStartTime = 1729634831
DetectedCpus = 96
DetectedMemory = 196608
Disk = 450000000
EnteredCurrentActivity = 1730752205
EnteredCurrentState = 1730752205
ExpectedMachineGracefulDrainingBadput = 2176446
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 685
KeyboardIdle = 3519
KFlops = 1699182
LastHeardFrom = 1731999816
LoadAvg = 0.13
Machine = "host00019.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 195584
Mips = 28617
MyAddress = "<10.0.0.19:9618?addrs=10.0.0.19-9618&alias=host00019.cluster.example.org&noUDP&sock=startd_61941_3cf9>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00019.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 4
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 30 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.19:9618?addrs=10.0.0.19-9618&alias=host00019.cluster.example.org&noUDP&sock=startd_61941_3cf9>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 96.0
TotalDisk = 450000000
TotalLoadAvg = 0.13
TotalMemory = 195584
TotalSlots = 1
TotalVirtualMemory = 204472320
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 8357
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8366
UtsnameNodename = "host00019.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.aarch64"
VirtualMemory = 200278016
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.20\"; port=9618; n=\"Internet\"; alias=\"host00020.cluster.example.org\"; spid=\"startd_46790_c4be\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.dave","group_chem.bob","group_cms.bob" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 8,8,8 }
ChildMemory = { 16384,8192,8192 }
ChildName = { "slot1_1@host00020.cluster.example.org","slot1_2@host00020.cluster.example.org","slot1_3@host00020.cluster.example.org" }
ChildRemoteOwner = { "dave@cluster.example.org","bob@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 1210
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 2da54a07 $"
ConsoleIdle = 3037
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 24
CurrentRank = 0.0
DaemonStartTime = 1729415767
DetectedCpus = 48
DetectedMemory = 149504
Disk = 149831323
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730568820
EnteredCurrentState = 1730568820
ExpectedMachineGracefulDrainingBadput = 4128221
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2448
KeyboardIdle = 2733
KFlops = 2750090
LastHeardFrom = 1731999894
LoadAvg = 0.549
Machine = "host00020.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 114688
Mips = 27537
MyAddress = "<10.0.0.20:9618?addrs=10.0.0.20-9618&alias=host00020.cluster.example.org&noUDP&sock=startd_46790_c4be>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00020.cluster.example.org"
NumPids = 9
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_chem.alice") * 5
RecentJobStarts = 14
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.20:9618?addrs=10.0.0.20-9618&alias=host00020.cluster.example.org&noUDP&sock=startd_46790_c4be>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 20.607
TotalCpus = 48.0
TotalDisk = 200000000
TotalLoadAvg = 21.156
TotalMemory = 147456
TotalSlots = 4
TotalVirtualMemory = 150994944
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 9513
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 19518
UtsnameNodename = "host00020.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 117440512
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.21\"; port=9618; n=\"Internet\"; alias=\"host00021.cluster.example.org\"; spid=\"startd_14505_bec9\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 6
ClockMin = 434
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 900df18d $"
ConsoleIdle = 2660883
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 64
CurrentRank = 0.0
DaemonStartTime = 1730147976
DetectedCpus = 64
DetectedMemory = 198656
Disk = 200000000
EnteredCurrentActivity = 1731167744
EnteredCurrentState = 1731167744
ExpectedMachineGracefulDrainingBadput = 2245297
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4541
KeyboardIdle = 2660390
KFlops = 3129537
LastHeardFrom = 1731999743
LoadAvg = 0.137
Machine = "host00021.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 196608
Mips = 31522
MyAddress = "<10.0.0.21:9618?addrs=10.0.0.21-9618&alias=host00021.cluster.example.org&noUDP&sock=startd_14505_bec9>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00021.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "dave",10,0)
RecentJobStarts = 13
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_chem" || TARGET.AccountingGroup == "group_bio" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "alice") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.21:9618?addrs=10.0.0.21-9618&alias=host00021.cluster.example.org&noUDP&sock=startd_14505_bec9>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 64.0
TotalDisk = 200000000
TotalLoadAvg = 0.137
TotalMemory = 196608
TotalSlots = 1
TotalVirtualMemory = 205520896
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 13802
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 13159
UtsnameNodename = "host00021.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 201326592
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.22\"; port=9618; n=\"Internet\"; alias=\"host00022.cluster.example.org\"; spid=\"startd_36648_fcea\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.heidi","group_atlas.alice","group_bio.carol","group_chem.carol","group_atlas.erin","group_atlas.heidi","group_atlas.alice","group_bio.bob","group_physics.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 16,8,2,1,8,16,16,2,8 }
ChildMemory = { 65536,16384,2048,4096,8192,32768,32768,2048,32256 }
ChildName = { "slot1_1@host00022.cluster.example.org","slot1_2@host00022.cluster.example.org","slot1_3@host00022.cluster.example.org","slot1_4@host00022.cluster.example.org","slot1_5@host00022.cluster.example.org","slot1_6@host00022.cluster.example.org","slot1_7@host00022.cluster.example.org","slot1_8@host00022.cluster.example.org","slot1_9@host00022.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","alice@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","erin@cluster.example.org","heidi@cluster.example.org","alice@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 721
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 5c69467e $"
ConsoleIdle = 2038
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 19
CurrentRank = 0.0
DaemonStartTime = 1728925408
DetectedCpus = 96
DetectedMemory = 198144
Disk = 356642800
EnteredCurrentActivity = 1731172863
EnteredCurrentState = 1731172863
ExpectedMachineGracefulDrainingBadput = 4828892
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4338
KeyboardIdle = 1638
KFlops = 2263738
LastHeardFrom = 1731999993
LoadAvg = 0.738
Machine = "host00022.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 0
Mips = 36171
MyAddress = "<10.0.0.22:9618?addrs=10.0.0.22-9618&alias=host00022.cluster.example.org&noUDP&sock=startd_36648_fcea>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00022.cluster.example.org"
NumPids = 9
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 10
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 30 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.22:9618?addrs=10.0.0.22-9618&alias=host00022.cluster.example.org&noUDP&sock=startd_36648_fcea>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 74.652
TotalCpus = 96.0
TotalDisk = 450000000
TotalLoadAvg = 75.39
TotalMemory = 196096
TotalSlots = 10
TotalVirtualMemory = 206045184
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 12070
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 18151
UtsnameNodename = "host00022.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.23\"; port=9618; n=\"Internet\"; alias=\"host00023.cluster.example.org\"; spid=\"startd_5516_bd85\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 0
ClockMin = 827
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: ca597dec $"
ConsoleIdle = 3820223
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 96
CurrentRank = 0.0
DaemonStartTime = 1729858473
DetectedCpus = 96
DetectedMemory = 394240
Disk = 3600000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730763492
EnteredCurrentState = 1730763492
ExpectedMachineGracefulDrainingBadput = 700285
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2189
KeyboardIdle = 3819817
KFlops = 1621663
LastHeardFrom = 1731999789
LoadAvg = 0.024
Machine = "host00023.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 392192
Mips = 34012
MyAddress = "<10.0.0.23:9618?addrs=10.0.0.23-9618&alias=host00023.cluster.example.org&noUDP&sock=startd_5516_bd85>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00023.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 4
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_bio" || TARGET.AccountingGroup == "group_atlas" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "frank") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.23:9618?addrs=10.0.0.23-9618&alias=host00023.cluster.example.org&noUDP&sock=startd_5516_bd85>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 96.0
TotalDisk = 3600000000
TotalLoadAvg = 0.024
TotalMemory = 392192
TotalSlots = 1
TotalVirtualMemory = 405798912
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 18050
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8711
UtsnameNodename = "host00023.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 401604608
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.24\"; port=9618; n=\"Internet\"; alias=\"host00024.cluster.example.org\"; spid=\"startd_31782_6bd1\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.alice","group_physics.grace","group_cms.carol","group_physics.dave","group_chem.dave" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,16,2,4,6 }
ChildMemory = { 8192,65536,2048,8192,24576 }
ChildName = { "slot1_1@host00024.cluster.example.org","slot1_2@host00024.cluster.example.org","slot1_3@host00024.cluster.example.org","slot1_4@host00024.cluster.example.org","slot1_5@host00024.cluster.example.org" }
ChildRemoteOwner = { "alice@cluster.example.org","grace@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org","dave@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 113
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 0a34c449 $"
ConsoleIdle = 767
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729392049
DetectedCpus = 32
DetectedMemory = 262656
Disk = 3562694365
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731038746
EnteredCurrentState = 1731038746
ExpectedMachineGracefulDrainingBadput = 1453876
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1715
KeyboardIdle = 532
KFlops = 2118188
LastHeardFrom = 1731999774
LoadAvg = 0.282
Machine = "host00024.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 153600
Mips = 38643
MyAddress = "<10.0.0.24:9618?addrs=10.0.0.24-9618&alias=host00024.cluster.example.org&noUDP&sock=startd_31782_6bd1>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00024.cluster.example.org"
NumPids = 10
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 7
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_atlas" || TARGET.AccountingGroup == "group_bio" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "dave") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.24:9618?addrs=10.0.0.24-9618&alias=host00024.cluster.example.org&noUDP&sock=startd_31782_6bd1>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 31.874
TotalCpus = 32.0
TotalDisk = 3600000000
TotalLoadAvg = 32.156
TotalMemory = 262144
TotalSlots = 6
TotalVirtualMemory = 275775488
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 16578
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 12269
UtsnameNodename = "host00024.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 157286400
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.25\"; port=9618; n=\"Internet\"; alias=\"host00025.cluster.example.org\"; spid=\"startd_43585_c8b1\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.heidi","group_physics.heidi","group_physics.heidi","group_bio.carol","group_physics.erin","group_bio.erin","group_atlas.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,4,1,8,8,16,7 }
ChildMemory = { 4096,4096,4096,32768,32768,32768,28672 }
ChildName = { "slot1_1@host00025.cluster.example.org","slot1_2@host00025.cluster.example.org","slot1_3@host00025.cluster.example.org","slot1_4@host00025.cluster.example.org","slot1_5@host00025.cluster.example.org","slot1_6@host00025.cluster.example.org","slot1_7@host00025.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","heidi@cluster.example.org","heidi@cluster.example.org","carol@cluster.example.org","erin@cluster.example.org","erin@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 937
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 0dd4e6cf $"
ConsoleIdle = 1090942
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1726521717
DetectedCpus = 48
DetectedMemory = 393216
Disk = 3513120606
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730360145
EnteredCurrentState = 1730360145
ExpectedMachineGracefulDrainingBadput = 2590598
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 407
KeyboardIdle = 1090555
KFlops = 1192300
LastHeardFrom = 1731999894
LoadAvg = 0.001
Machine = "host00025.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 253440
Mips = 39817
MyAddress = "<10.0.0.25:9618?addrs=10.0.0.25-9618&alias=host00025.cluster.example.org&noUDP&sock=startd_43585_c8b1>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00025.cluster.example.org"
NumPids = 21
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 2
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 30 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.25:9618?addrs=10.0.0.25-9618&alias=host00025.cluster.example.org&noUDP&sock=startd_43585_c8b1>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 42.639
TotalCpus = 48.0
TotalDisk = 3600000000
TotalLoadAvg = 42.64
TotalMemory = 392704
TotalSlots = 8
TotalVirtualMemory = 407371776
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 3929
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 2271
UtsnameNodename = "host00025.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 259522560
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.26\"; port=9618; n=\"Internet\"; alias=\"host00026.cluster.example.org\"; spid=\"startd_17825_96ad\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_atlas.dave","group_physics.dave","group_atlas.dave","group_bio.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 4,4,8,8 }
ChildMemory = { 8192,8192,16384,8192 }
ChildName = { "slot1_1@host00026.cluster.example.org","slot1_2@host00026.cluster.example.org","slot1_3@host00026.cluster.example.org","slot1_4@host00026.cluster.example.org" }
ChildRemoteOwner = { "dave@cluster.example.org","dave@cluster.example.org","dave@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 909
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 46affd36 $"
ConsoleIdle = 2611939
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729419371
DetectedCpus = 24
DetectedMemory = 196608
Disk = 3566454358
EnteredCurrentActivity = 1731996872
EnteredCurrentState = 1731996872
ExpectedMachineGracefulDrainingBadput = 4126282
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4961
KeyboardIdle = 2611928
KFlops = 2510361
LastHeardFrom = 1731999865
LoadAvg = 0.456
Machine = "host00026.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 154624
Mips = 39373
MyAddress = "<10.0.0.26:9618?addrs=10.0.0.26-9618&alias=host00026.cluster.example.org&noUDP&sock=startd_17825_96ad>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00026.cluster.example.org"
NumPids = 8
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 11
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "frank")
StartdIpAddr = "<10.0.0.26:9618?addrs=10.0.0.26-9618&alias=host00026.cluster.example.org&noUDP&sock=startd_17825_96ad>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 20.947
TotalCpus = 24.0
TotalDisk = 3600000000
TotalLoadAvg = 21.403
TotalMemory = 195584
TotalSlots = 5
TotalVirtualMemory = 203423744
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 1777
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3458
UtsnameNodename = "host00026.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 158334976
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.27\"; port=9618; n=\"Internet\"; alias=\"host00027.cluster.example.org\"; spid=\"startd_79239_537d\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 1
ClockMin = 960
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 0f4d2e33 $"
ConsoleIdle = 2771
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 8
CurrentRank = 0.0
DaemonStartTime = 1729054562
DetectedCpus = 8
DetectedMemory = 17920
Disk = 200000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730827572
EnteredCurrentState = 1730827572
ExpectedMachineGracefulDrainingBadput = 2780026
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_68216f2b }
CUDACapability = 7.0
CUDAClockMhz = 1410.0
CUDAComputeUnits = 80
CUDACoresPerCU = 64
CUDADeviceName = "Tesla V100-PCIE-32GB"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 32501
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-68216f2b"
GPUs = 1
GPUsMemoryUsage = undefined
GPUs_GPU_68216f2b = [ Id = "GPU-68216f2b"; Capability = 7.0; DeviceName = "Tesla V100-PCIE-32GB"; GlobalMemoryMb = 32501; ECCEnabled = true; ]
TotalGPUs = 1
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 767
KeyboardIdle = 2203
KFlops = 1036906
LastHeardFrom = 1731999906
LoadAvg = 0.615
Machine = "host00027.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 15872
Mips = 35038
MyAddress = "<10.0.0.27:9618?addrs=10.0.0.27-9618&alias=host00027.cluster.example.org&noUDP&sock=startd_79239_537d>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00027.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_chem.alice") * 5
RecentJobStarts = 7
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ifThenElse(TARGET.RequestGPUs =?= undefined || TARGET.RequestGPUs == 0,Cpus - TARGET.RequestCpus >= 2,true) && (TARGET.RequestCpus <= Cpus) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.27:9618?addrs=10.0.0.27-9618&alias=host00027.cluster.example.org&noUDP&sock=startd_79239_537d>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 8.0
TotalDisk = 200000000
TotalLoadAvg = 0.615
TotalMemory = 15872
TotalSlots = 1
TotalVirtualMemory = 18350080
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 9968
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3304
UtsnameNodename = "host00027.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 16252928
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.28\"; port=9618; n=\"Internet\"; alias=\"host00028.cluster.example.org\"; spid=\"startd_8706_a0b2\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 6
ClockMin = 179
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 31de54a5 $"
ConsoleIdle = 3331958
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 8
CurrentRank = 0.0
DaemonStartTime = 1730914066
DetectedCpus = 8
DetectedMemory = 33280
Disk = 200000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731886600
EnteredCurrentState = 1731886600
ExpectedMachineGracefulDrainingBadput = 3208216
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3490
KeyboardIdle = 3331600
KFlops = 1848792
LastHeardFrom = 1731999875
LoadAvg = 0.02
Machine = "host00028.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 32256
Mips = 16882
MyAddress = "<10.0.0.28:9618?addrs=10.0.0.28-9618&alias=host00028.cluster.example.org&noUDP&sock=startd_8706_a0b2>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00028.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "erin",10,0)
RecentJobStarts = 10
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.28:9618?addrs=10.0.0.28-9618&alias=host00028.cluster.example.org&noUDP&sock=startd_8706_a0b2>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 8.0
TotalDisk = 200000000
TotalLoadAvg = 0.02
TotalMemory = 32256
TotalSlots = 1
TotalVirtualMemory = 35127296
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 19823
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3830
UtsnameNodename = "host00028.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 33030144
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.29\"; port=9618; n=\"Internet\"; alias=\"host00029.cluster.example.org\"; spid=\"startd_32420_2500\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.frank","group_chem.bob","group_bio.carol","group_atlas.heidi","group_bio.alice","group_chem.alice","group_chem.dave","group_chem.frank","group_physics.frank","group_bio.frank","group_atlas.frank","group_atlas.frank","group_atlas.bob","group_atlas.carol" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 4,4,8,4,4,4,2,8,2,4,8,2,1,4 }
ChildMemory = { 8192,8192,8192,4096,4096,16384,8192,32768,2048,16384,8192,2048,4096,4096 }
ChildName = { "slot1_1@host00029.cluster.example.org","slot1_2@host00029.cluster.example.org","slot1_3@host00029.cluster.example.org","slot1_4@host00029.cluster.example.org","slot1_5@host00029.cluster.example.org","slot1_6@host00029.cluster.example.org","slot1_7@host00029.cluster.example.org","slot1_8@host00029.cluster.example.org","slot1_9@host00029.cluster.example.org","slot1_10@host00029.cluster.example.org","slot1_11@host00029.cluster.example.org","slot1_12@host00029.cluster.example.org","slot1_13@host00029.cluster.example.org","slot1_14@host00029.cluster.example.org" }
ChildRemoteOwner = { "frank@cluster.example.org","bob@cluster.example.org","carol@cluster.example.org","heidi@cluster.example.org","alice@cluster.example.org","alice@cluster.example.org","dave@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org","carol@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 623
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: df183cd5 $"
ConsoleIdle = 141055
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 5
CurrentRank = 0.0
DaemonStartTime = 1729797392
DetectedCpus = 64
DetectedMemory = 263680
Disk = 1645790273
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731869122
EnteredCurrentState = 1731869122
ExpectedMachineGracefulDrainingBadput = 4298751
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 607
KeyboardIdle = 140461
KFlops = 1881508
LastHeardFrom = 1731999859
LoadAvg = 0.217
Machine = "host00029.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 134656
Mips = 38317
MyAddress = "<10.0.0.29:9618?addrs=10.0.0.29-9618&alias=host00029.cluster.example.org&noUDP&sock=startd_32420_2500>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00029.cluster.example.org"
NumPids = 14
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 7
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 5 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.29:9618?addrs=10.0.0.29-9618&alias=host00029.cluster.example.org&noUDP&sock=startd_32420_2500>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 58.797
TotalCpus = 64.0
TotalDisk = 1800000000
TotalLoadAvg = 59.014
TotalMemory = 261632
TotalSlots = 15
TotalVirtualMemory = 270008320
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 4378
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 6923
UtsnameNodename = "host00029.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 137887744
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.30\"; port=9618; n=\"Internet\"; alias=\"host00030.cluster.example.org\"; spid=\"startd_3778_53c2\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.frank","group_physics.erin","group_bio.frank","group_chem.bob","group_bio.heidi","group_physics.frank","group_physics.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 2,8,8,2,4,1,7 }
ChildMemory = { 8192,32768,8192,4096,16384,1024,14336 }
ChildName = { "slot1_1@host00030.cluster.example.org","slot1_2@host00030.cluster.example.org","slot1_3@host00030.cluster.example.org","slot1_4@host00030.cluster.example.org","slot1_5@host00030.cluster.example.org","slot1_6@host00030.cluster.example.org","slot1_7@host00030.cluster.example.org" }
ChildRemoteOwner = { "frank@cluster.example.org","erin@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org","heidi@cluster.example.org","frank@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 3
ClockMin = 462
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 9ceba1bf $"
ConsoleIdle = 1103091
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1728874985
DetectedCpus = 32
DetectedMemory = 99328
Disk = 1705362367
EnteredCurrentActivity = 1731621978
EnteredCurrentState = 1731621978
ExpectedMachineGracefulDrainingBadput = 4744105
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_9376cda0,GPUs_GPU_9bca1c4e }
CUDACapability = 7.5
CUDAClockMhz = 1380.0
CUDAComputeUnits = 68
CUDACoresPerCU = 64
CUDADeviceName = "NVIDIA GeForce RTX 2080 Ti"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 11012
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-9376cda0, GPU-9bca1c4e"
GPUs = 0
GPUsMemoryUsage = undefined
GPUs_GPU_9376cda0 = [ Id = "GPU-9376cda0"; Capability = 7.5; DeviceName = "NVIDIA GeForce RTX 2080 Ti"; GlobalMemoryMb = 11012; ECCEnabled = true; ]
GPUs_GPU_9bca1c4e = [ Id = "GPU-9bca1c4e"; Capability = 7.5; DeviceName = "NVIDIA GeForce RTX 2080 Ti"; GlobalMemoryMb = 11012; ECCEnabled = true; ]
TotalGPUs = 2
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 774
KeyboardIdle = 1102807
KFlops = 1079894
LastHeardFrom = 1731999797
LoadAvg = 0.107
Machine = "host00030.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 13312
Mips = 25582
MyAddress = "<10.0.0.30:9618?addrs=10.0.0.30-9618&alias=host00030.cluster.example.org&noUDP&sock=startd_3778_53c2>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00030.cluster.example.org"
NumPids = 14
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ifThenElse(TARGET.RequestGPUs =?= undefined || TARGET.RequestGPUs == 0,Cpus - TARGET.RequestCpus >= 2,true) && (TARGET.RequestCpus <= Cpus) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.30:9618?addrs=10.0.0.30-9618&alias=host00030.cluster.example.org&noUDP&sock=startd_3778_53c2>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 27.502
TotalCpus = 32.0
TotalDisk = 1800000000
TotalLoadAvg = 27.609
TotalMemory = 98304
TotalSlots = 8
TotalVirtualMemory = 103809024
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 12971
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 14820
UtsnameNodename = "host00030.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 13631488
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.31\"; port=9618; n=\"Internet\"; alias=\"host00031.cluster.example.org\"; spid=\"startd_20667_f657\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.heidi","group_chem.grace" }
ChildActivity = { "Busy","Busy" }
ChildCpus = { 8,8 }
ChildMemory = { 16384,15360 }
ChildName = { "slot1_1@host00031.cluster.example.org","slot1_2@host00031.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed" }
ClockDay = 1
ClockMin = 764
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 2278c42c $"
ConsoleIdle = 2309
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1725817477
DetectedCpus = 16
DetectedMemory = 32768
Disk = 3574819223
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730755527
EnteredCurrentState = 1730755527
ExpectedMachineGracefulDrainingBadput = 1454792
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4718
KeyboardIdle = 2263
KFlops = 1693729
LastHeardFrom = 1731999881
LoadAvg = 0.71
Machine = "host00031.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 0
Mips = 29763
MyAddress = "<10.0.0.31:9618?addrs=10.0.0.31-9618&alias=host00031.cluster.example.org&noUDP&sock=startd_20667_f657>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00031.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_cms.alice") * 5
RecentJobStarts = 1
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_cms" || TARGET.AccountingGroup == "group_chem" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "erin") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.31:9618?addrs=10.0.0.31-9618&alias=host00031.cluster.example.org&noUDP&sock=startd_20667_f657>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 15.339
TotalCpus = 16.0
TotalDisk = 3600000000
TotalLoadAvg = 16.049
TotalMemory = 31744
TotalSlots = 3
TotalVirtualMemory = 39845888
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 5359
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 16796
UtsnameNodename = "host00031.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.32\"; port=9618; n=\"Internet\"; alias=\"host00032.cluster.example.org\"; spid=\"startd_28311_ccf6\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.erin","group_physics.dave","group_atlas.erin","group_cms.carol" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 2,8,4,8 }
ChildMemory = { 8192,16384,8192,32768 }
ChildName = { "slot1_1@host00032.cluster.example.org","slot1_2@host00032.cluster.example.org","slot1_3@host00032.cluster.example.org","slot1_4@host00032.cluster.example.org" }
ChildRemoteOwner = { "erin@cluster.example.org","dave@cluster.example.org","erin@cluster.example.org","carol@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 1
ClockMin = 366
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Windows_10 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 7181d777 $"
ConsoleIdle = 3415555
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 2
CurrentRank = 0.0
DaemonStartTime = 1726325210
DetectedCpus = 24
DetectedMemory = 99328
Disk = 395397152
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730626886
EnteredCurrentState = 1730626886
ExpectedMachineGracefulDrainingBadput = 4979216
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4836
KeyboardIdle = 3415369
KFlops = 3991441
LastHeardFrom = 1731999770
LoadAvg = 0.013
Machine = "host00032.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 32768
Mips = 27452
MyAddress = "<10.0.0.32:9618?addrs=10.0.0.32-9618&alias=host00032.cluster.example.org&noUDP&sock=startd_28311_ccf6>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00032.cluster.example.org"
NumPids = 8
OpSys = "WINDOWS"
OpSysAndVer = "WINDOWS1000"
OpSysLongName = "Windows 10 Enterprise"
OpSysMajorVer = 10
OpSysName = "Windows"
OpSysVer = 1000
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_cms" || TARGET.AccountingGroup == "group_bio" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "dave") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.32:9618?addrs=10.0.0.32-9618&alias=host00032.cluster.example.org&noUDP&sock=startd_28311_ccf6>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 21.938
TotalCpus = 24.0
TotalDisk = 450000000
TotalLoadAvg = 21.951
TotalMemory = 98304
TotalSlots = 5
TotalVirtualMemory = 104857600
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 11430
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 5786
UtsnameNodename = "host00032.cluster.example.org"
UtsnameRelease = "10.0.19045"
VirtualMemory = 33554432
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.33\"; port=9618; n=\"Internet\"; alias=\"host00033.cluster.example.org\"; spid=\"startd_79366_8beb\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.heidi","group_physics.frank","group_cms.bob" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 4,8,4 }
ChildMemory = { 8192,8192,4096 }
ChildName = { "slot1_1@host00033.cluster.example.org","slot1_2@host00033.cluster.example.org","slot1_3@host00033.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 0
ClockMin = 654
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 741f6780 $"
ConsoleIdle = 2599
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729690252
DetectedCpus = 16
DetectedMemory = 133120
Disk = 1758215558
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730939776
EnteredCurrentState = 1730939776
ExpectedMachineGracefulDrainingBadput = 2349838
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3648
KeyboardIdle = 2216
KFlops = 3003881
LastHeardFrom = 1731999846
LoadAvg = 0.86
Machine = "host00033.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 110592
Mips = 35105
MyAddress = "<10.0.0.33:9618?addrs=10.0.0.33-9618&alias=host00033.cluster.example.org&noUDP&sock=startd_79366_8beb>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00033.cluster.example.org"
NumPids = 9
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "carol",10,0)
RecentJobStarts = 9
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((ClockDay == 0 || ClockDay == 6) || ClockMin < 7 * 60 || ClockMin > 17 * 60 || TARGET.RequestMemory <= 4096) && (TARGET.RequestCpus <= Cpus)
StartdIpAddr = "<10.0.0.33:9618?addrs=10.0.0.33-9618&alias=host00033.cluster.example.org&noUDP&sock=startd_79366_8beb>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 15.678
TotalCpus = 16.0
TotalDisk = 1800000000
TotalLoadAvg = 16.538
TotalMemory = 131072
TotalSlots = 4
TotalVirtualMemory = 140509184
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 10262
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 9590
UtsnameNodename = "host00033.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 113246208
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.34\"; port=9618; n=\"Internet\"; alias=\"host00034.cluster.example.org\"; spid=\"startd_23825_335d\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.frank","group_cms.carol","group_physics.grace","group_atlas.grace","group_cms.frank","group_chem.erin","group_chem.dave","group_chem.dave","group_physics.carol","group_bio.carol","group_physics.carol","group_bio.carol","group_atlas.bob","group_chem.heidi","group_physics.carol","group_physics.grace","group_physics.carol","group_cms.frank","group_bio.frank","group_physics.carol","group_cms.alice" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,4,8,4,8,16,2,2,2,2,16,8,4,1,4,8,8,2,2,4,4 }
ChildMemory = { 32768,16384,16384,8192,16384,65536,2048,8192,8192,2048,32768,8192,8192,2048,8192,32768,16384,4096,4096,16384,16384 }
ChildName = { "slot1_1@host00034.cluster.example.org","slot1_2@host00034.cluster.example.org","slot1_3@host00034.cluster.example.org","slot1_4@host00034.cluster.example.org","slot1_5@host00034.cluster.example.org","slot1_6@host00034.cluster.example.org","slot1_7@host00034.cluster.example.org","slot1_8@host00034.cluster.example.org","slot1_9@host00034.cluster.example.org","slot1_10@host00034.cluster.example.org","slot1_11@host00034.cluster.example.org","slot1_12@host00034.cluster.example.org","slot1_13@host00034.cluster.example.org","slot1_14@host00034.cluster.example.org","slot1_15@host00034.cluster.example.org","slot1_16@host00034.cluster.example.org","slot1_17@host00034.cluster.example.org","slot1_18@host00034.cluster.example.org","slot1_19@host00034.cluster.example.org","slot1_20@host00034.cluster.example.org","slot1_21@host00034.cluster.example.org" }
ChildRemoteOwner = { "frank@cluster.example.org","carol@cluster.example.org","grace@cluster.example.org","grace@cluster.example.org","frank@cluster.example.org","erin@cluster.example.org","dave@cluster.example.org","dave@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org","heidi@cluster.example.org","carol@cluster.example.org","grace@cluster.example.org","carol@cluster.example.org","frank@cluster.example.org","frank@cluster.example.org","carol@cluster.example.org","alice@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 273
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 47d72448 $"
ConsoleIdle = 734483
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 11
CurrentRank = 0.0
DaemonStartTime = 1731175127
DetectedCpus = 128
DetectedMemory = 524800
Disk = 1610869278
EnteredCurrentActivity = 1731928084
EnteredCurrentState = 1731928084
ExpectedMachineGracefulDrainingBadput = 3218761
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4497
KeyboardIdle = 734042
KFlops = 3049854
LastHeardFrom = 1731999895
LoadAvg = 0.118
Machine = "host00034.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 198144
Mips = 34413
MyAddress = "<10.0.0.34:9618?addrs=10.0.0.34-9618&alias=host00034.cluster.example.org&noUDP&sock=startd_23825_335d>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00034.cluster.example.org"
NumPids = 21
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 2
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.34:9618?addrs=10.0.0.34-9618&alias=host00034.cluster.example.org&noUDP&sock=startd_23825_335d>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 103.422
TotalCpus = 128.0
TotalDisk = 1800000000
TotalLoadAvg = 103.54
TotalMemory = 523776
TotalSlots = 22
TotalVirtualMemory = 538443776
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 7799
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 7963
UtsnameNodename = "host00034.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 202899456
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.35\"; port=9618; n=\"Internet\"; alias=\"host00035.cluster.example.org\"; spid=\"startd_3732_7b68\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 6
ClockMin = 849
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: dca460ec $"
ConsoleIdle = 3299293
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 8
CurrentRank = 0.0
DaemonStartTime = 1727241402
DetectedCpus = 8
DetectedMemory = 24576
Disk = 200000000
EnteredCurrentActivity = 1730381742
EnteredCurrentState = 1730381742
ExpectedMachineGracefulDrainingBadput = 160028
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 202
KeyboardIdle = 3299166
KFlops = 3915895
LastHeardFrom = 1731999759
LoadAvg = 0.014
Machine = "host00035.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 23552
Mips = 22723
MyAddress = "<10.0.0.35:9618?addrs=10.0.0.35-9618&alias=host00035.cluster.example.org&noUDP&sock=startd_3732_7b68>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00035.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 0
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.35:9618?addrs=10.0.0.35-9618&alias=host00035.cluster.example.org&noUDP&sock=startd_3732_7b68>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 8.0
TotalDisk = 200000000
TotalLoadAvg = 0.014
TotalMemory = 23552
TotalSlots = 1
TotalVirtualMemory = 31457280
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 2200
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 19420
UtsnameNodename = "host00035.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 24117248
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.36\"; port=9618; n=\"Internet\"; alias=\"host00036.cluster.example.org\"; spid=\"startd_57493_2f07\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_atlas.bob","group_atlas.erin","group_chem.heidi","group_bio.alice","group_atlas.grace","group_cms.erin","group_cms.grace","group_atlas.alice" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,4,4,1,2,8,4,1 }
ChildMemory = { 16384,16384,8192,1024,8192,32768,4096,2048 }
ChildName = { "slot1_1@host00036.cluster.example.org","slot1_2@host00036.cluster.example.org","slot1_3@host00036.cluster.example.org","slot1_4@host00036.cluster.example.org","slot1_5@host00036.cluster.example.org","slot1_6@host00036.cluster.example.org","slot1_7@host00036.cluster.example.org","slot1_8@host00036.cluster.example.org" }
ChildRemoteOwner = { "bob@cluster.example.org","erin@cluster.example.org","heidi@cluster.example.org","alice@cluster.example.org","grace@cluster.example.org","erin@cluster.example.org","grace@cluster.example.org","alice@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 978
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 65fff458 $"
ConsoleIdle = 125378
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 32
CurrentRank = 0.0
DaemonStartTime = 1728738517
DetectedCpus = 64
DetectedMemory = 524288
Disk = 1735545588
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731436607
EnteredCurrentState = 1731436607
ExpectedMachineGracefulDrainingBadput = 1240134
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 948
KeyboardIdle = 125153
KFlops = 1918089
LastHeardFrom = 1731999816
LoadAvg = 0.097
Machine = "host00036.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 434176
Mips = 29348
MyAddress = "<10.0.0.36:9618?addrs=10.0.0.36-9618&alias=host00036.cluster.example.org&noUDP&sock=startd_57493_2f07>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00036.cluster.example.org"
NumPids = 16
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 9
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 30 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.36:9618?addrs=10.0.0.36-9618&alias=host00036.cluster.example.org&noUDP&sock=startd_57493_2f07>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 28.528
TotalCpus = 64.0
TotalDisk = 1800000000
TotalLoadAvg = 28.625
TotalMemory = 523264
TotalSlots = 9
TotalVirtualMemory = 540016640
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 4540
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3600
UtsnameNodename = "host00036.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 444596224
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.37\"; port=9618; n=\"Internet\"; alias=\"host00037.cluster.example.org\"; spid=\"startd_66777_46a3\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 4
ClockMin = 1027
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Windows_10 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 0b2eda1f $"
ConsoleIdle = 3231820
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 64
CurrentRank = 0.0
DaemonStartTime = 1729744296
DetectedCpus = 64
DetectedMemory = 524288
Disk = 450000000
EnteredCurrentActivity = 1731974827
EnteredCurrentState = 1731974827
ExpectedMachineGracefulDrainingBadput = 358276
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1642
KeyboardIdle = 3231647
KFlops = 2188280
LastHeardFrom = 1731999918
LoadAvg = 0.166
Machine = "host00037.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 523776
Mips = 30137
MyAddress = "<10.0.0.37:9618?addrs=10.0.0.37-9618&alias=host00037.cluster.example.org&noUDP&sock=startd_66777_46a3>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00037.cluster.example.org"
NumPids = 0
OpSys = "WINDOWS"
OpSysAndVer = "WINDOWS1000"
OpSysLongName = "Windows 10 Enterprise"
OpSysMajorVer = 10
OpSysName = "Windows"
OpSysVer = 1000
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "frank",10,0)
RecentJobStarts = 4
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 30 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.37:9618?addrs=10.0.0.37-9618&alias=host00037.cluster.example.org&noUDP&sock=startd_66777_46a3>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 64.0
TotalDisk = 450000000
TotalLoadAvg = 0.166
TotalMemory = 523776
TotalSlots = 1
TotalVirtualMemory = 539492352
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 7122
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3038
UtsnameNodename = "host00037.cluster.example.org"
UtsnameRelease = "10.0.19045"
VirtualMemory = 536346624
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.38\"; port=9618; n=\"Internet\"; alias=\"host00038.cluster.example.org\"; spid=\"startd_67021_b4ad\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.carol","group_chem.dave","group_chem.dave","group_cms.alice","group_physics.frank","group_cms.bob","group_cms.heidi" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 1,4,4,4,16,2,16 }
ChildMemory = { 1024,16384,8192,8192,16384,2048,65536 }
ChildName = { "slot1_1@host00038.cluster.example.org","slot1_2@host00038.cluster.example.org","slot1_3@host00038.cluster.example.org","slot1_4@host00038.cluster.example.org","slot1_5@host00038.cluster.example.org","slot1_6@host00038.cluster.example.org","slot1_7@host00038.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","dave@cluster.example.org","dave@cluster.example.org","alice@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org","heidi@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 978
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: dd70a935 $"
ConsoleIdle = 916583
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 1
CurrentRank = 0.0
DaemonStartTime = 1730300771
DetectedCpus = 48
DetectedMemory = 393728
Disk = 117582922
EnteredCurrentActivity = 1731200005
EnteredCurrentState = 1731200005
ExpectedMachineGracefulDrainingBadput = 831210
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3572
KeyboardIdle = 916449
KFlops = 3185033
LastHeardFrom = 1731999898
LoadAvg = 0.017
Machine = "host00038.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 275456
Mips = 38088
MyAddress = "<10.0.0.38:9618?addrs=10.0.0.38-9618&alias=host00038.cluster.example.org&noUDP&sock=startd_67021_b4ad>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00038.cluster.example.org"
NumPids = 21
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 10
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_physics" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "erin") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.38:9618?addrs=10.0.0.38-9618&alias=host00038.cluster.example.org&noUDP&sock=startd_67021_b4ad>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 41.494
TotalCpus = 48.0
TotalDisk = 200000000
TotalLoadAvg = 41.511
TotalMemory = 393216
TotalSlots = 8
TotalVirtualMemory = 403701760
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 8154
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8045
UtsnameNodename = "host00038.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 282066944
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.39\"; port=9618; n=\"Internet\"; alias=\"host00039.cluster.example.org\"; spid=\"startd_65445_3b5c\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 6
ClockMin = 1307
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: c465fc7a $"
ConsoleIdle = 3969017
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 64
CurrentRank = 0.0
DaemonStartTime = 1727577403
DetectedCpus = 64
DetectedMemory = 261632
Disk = 1800000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731184915
EnteredCurrentState = 1731184915
ExpectedMachineGracefulDrainingBadput = 4512147
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 200
KeyboardIdle = 3968684
KFlops = 2226747
LastHeardFrom = 1731999713
LoadAvg = 0.055
Machine = "host00039.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 261120
Mips = 16987
MyAddress = "<10.0.0.39:9618?addrs=10.0.0.39-9618&alias=host00039.cluster.example.org&noUDP&sock=startd_65445_3b5c>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00039.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 3
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 30 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.39:9618?addrs=10.0.0.39-9618&alias=host00039.cluster.example.org&noUDP&sock=startd_65445_3b5c>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 64.0
TotalDisk = 1800000000
TotalLoadAvg = 0.055
TotalMemory = 261120
TotalSlots = 1
TotalVirtualMemory = 272629760
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 14883
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8780
UtsnameNodename = "host00039.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 267386880
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.40\"; port=9618; n=\"Internet\"; alias=\"host00040.cluster.example.org\"; spid=\"startd_99339_307f\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.grace","group_atlas.bob" }
ChildActivity = { "Busy","Busy" }
ChildCpus = { 4,4 }
ChildMemory = { 4096,4096 }
ChildName = { "slot1_1@host00040.cluster.example.org","slot1_2@host00040.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed" }
ClockDay = 1
ClockMin = 139
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 37bac79a $"
ConsoleIdle = 170301
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1730914907
DetectedCpus = 8
DetectedMemory = 33792
Disk = 433308580
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731270945
EnteredCurrentState = 1731270945
ExpectedMachineGracefulDrainingBadput = 2531654
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2070
KeyboardIdle = 169988
KFlops = 1165999
LastHeardFrom = 1731999883
LoadAvg = 0.009
Machine = "host00040.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 23552
Mips = 35014
MyAddress = "<10.0.0.40:9618?addrs=10.0.0.40-9618&alias=host00040.cluster.example.org&noUDP&sock=startd_99339_307f>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00040.cluster.example.org"
NumPids = 2
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_chem.alice") * 5
RecentJobStarts = 7
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.40:9618?addrs=10.0.0.40-9618&alias=host00040.cluster.example.org&noUDP&sock=startd_99339_307f>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 7.881
TotalCpus = 8.0
TotalDisk = 450000000
TotalLoadAvg = 7.89
TotalMemory = 31744
TotalSlots = 3
TotalVirtualMemory = 34603008
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 2769
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8607
UtsnameNodename = "host00040.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 24117248
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.41\"; port=9618; n=\"Internet\"; alias=\"host00041.cluster.example.org\"; spid=\"startd_53259_67b8\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.heidi","group_chem.frank","group_atlas.bob" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 1,2,13 }
ChildMemory = { 2048,4096,13312 }
ChildName = { "slot1_1@host00041.cluster.example.org","slot1_2@host00041.cluster.example.org","slot1_3@host00041.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","frank@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 1230
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 4eda51a4 $"
ConsoleIdle = 3729
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1730956662
DetectedCpus = 16
DetectedMemory = 66048
Disk = 419475581
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731038654
EnteredCurrentState = 1731038654
ExpectedMachineGracefulDrainingBadput = 243976
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3615
KeyboardIdle = 3372
KFlops = 3332565
LastHeardFrom = 1731999979
LoadAvg = 0.297
Machine = "host00041.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 45568
Mips = 38420
MyAddress = "<10.0.0.41:9618?addrs=10.0.0.41-9618&alias=host00041.cluster.example.org&noUDP&sock=startd_53259_67b8>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00041.cluster.example.org"
NumPids = 3
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 2
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.41:9618?addrs=10.0.0.41-9618&alias=host00041.cluster.example.org&noUDP&sock=startd_53259_67b8>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 14.154
TotalCpus = 16.0
TotalDisk = 450000000
TotalLoadAvg = 14.451
TotalMemory = 65024
TotalSlots = 4
TotalVirtualMemory = 71827456
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 14817
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 10068
UtsnameNodename = "host00041.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 46661632
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.42\"; port=9618; n=\"Internet\"; alias=\"host00042.cluster.example.org\"; spid=\"startd_15984_7e46\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.dave","group_cms.carol","group_atlas.bob" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 8,8,8 }
ChildMemory = { 8192,8192,16384 }
ChildName = { "slot1_1@host00042.cluster.example.org","slot1_2@host00042.cluster.example.org","slot1_3@host00042.cluster.example.org" }
ChildRemoteOwner = { "dave@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 3
ClockMin = 815
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 9e25e742 $"
ConsoleIdle = 1099
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729818204
DetectedCpus = 24
DetectedMemory = 196096
Disk = 173047657
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731452658
EnteredCurrentState = 1731452658
ExpectedMachineGracefulDrainingBadput = 2660494
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 334
KeyboardIdle = 561
KFlops = 3261410
LastHeardFrom = 1731999791
LoadAvg = 0.344
Machine = "host00042.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 162816
Mips = 31955
MyAddress = "<10.0.0.42:9618?addrs=10.0.0.42-9618&alias=host00042.cluster.example.org&noUDP&sock=startd_15984_7e46>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00042.cluster.example.org"
NumPids = 9
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 18
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "grace")
StartdIpAddr = "<10.0.0.42:9618?addrs=10.0.0.42-9618&alias=host00042.cluster.example.org&noUDP&sock=startd_15984_7e46>"
State = "Owner"
TargetType = "Job"
TotalCondorLoadAvg = 21.553
TotalCpus = 24.0
TotalDisk = 200000000
TotalLoadAvg = 21.897
TotalMemory = 195584
TotalSlots = 4
TotalVirtualMemory = 207618048
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 16469
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 2227
UtsnameNodename = "host00042.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 166723584
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.43\"; port=9618; n=\"Internet\"; alias=\"host00043.cluster.example.org\"; spid=\"startd_91326_119f\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.carol","group_chem.dave","group_physics.bob" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 4,1,3 }
ChildMemory = { 16384,4096,3072 }
ChildName = { "slot1_1@host00043.cluster.example.org","slot1_2@host00043.cluster.example.org","slot1_3@host00043.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","dave@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 1
ClockMin = 81
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 798f10e1 $"
ConsoleIdle = 694935
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1730853455
DetectedCpus = 8
DetectedMemory = 26624
Disk = 843639006
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731683334
EnteredCurrentState = 1731683334
ExpectedMachineGracefulDrainingBadput = 4884895
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2128
KeyboardIdle = 694411
KFlops = 1062314
LastHeardFrom = 1731999794
LoadAvg = 0.184
Machine = "host00043.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 1024
Mips = 24264
MyAddress = "<10.0.0.43:9618?addrs=10.0.0.43-9618&alias=host00043.cluster.example.org&noUDP&sock=startd_91326_119f>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00043.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_chem" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "bob") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.43:9618?addrs=10.0.0.43-9618&alias=host00043.cluster.example.org&noUDP&sock=startd_91326_119f>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 6.863
TotalCpus = 8.0
TotalDisk = 900000000
TotalLoadAvg = 7.047
TotalMemory = 24576
TotalSlots = 4
TotalVirtualMemory = 28311552
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 12361
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 3581
UtsnameNodename = "host00043.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 1048576
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.44\"; port=9618; n=\"Internet\"; alias=\"host00044.cluster.example.org\"; spid=\"startd_24706_b062\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_physics.bob","group_bio.frank","group_bio.carol","group_chem.dave","group_atlas.erin","group_cms.bob","group_atlas.carol","group_bio.heidi","group_physics.frank","group_cms.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,4,1,16,8,16,2,2,8,8 }
ChildMemory = { 8192,16384,2048,65536,32768,32768,8192,4096,16384,9216 }
ChildName = { "slot1_1@host00044.cluster.example.org","slot1_2@host00044.cluster.example.org","slot1_3@host00044.cluster.example.org","slot1_4@host00044.cluster.example.org","slot1_5@host00044.cluster.example.org","slot1_6@host00044.cluster.example.org","slot1_7@host00044.cluster.example.org","slot1_8@host00044.cluster.example.org","slot1_9@host00044.cluster.example.org","slot1_10@host00044.cluster.example.org" }
ChildRemoteOwner = { "bob@cluster.example.org","frank@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org","carol@cluster.example.org","heidi@cluster.example.org","frank@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 1152
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 57840c78 $"
ConsoleIdle = 3264201
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 23
CurrentRank = 0.0
DaemonStartTime = 1729744078
DetectedCpus = 96
DetectedMemory = 196608
Disk = 342224224
EnteredCurrentActivity = 1730606196
EnteredCurrentState = 1730606196
ExpectedMachineGracefulDrainingBadput = 485416
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_32bbc51d,GPUs_GPU_2de75f0a,GPUs_GPU_14d10597,GPUs_GPU_0a722a05,GPUs_GPU_51fd3af9,GPUs_GPU_86ced96e,GPUs_GPU_6c2c00e2,GPUs_GPU_f569202c }
CUDACapability = 8.0
CUDAClockMhz = 1410.0
CUDAComputeUnits = 108
CUDACoresPerCU = 64
CUDADeviceName = "NVIDIA A100-SXM4-40GB"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 40338
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-32bbc51d, GPU-2de75f0a, GPU-14d10597, GPU-0a722a05, GPU-51fd3af9, GPU-86ced96e, GPU-6c2c00e2, GPU-f569202c"
GPUs = 3
GPUsMemoryUsage = undefined
GPUs_GPU_32bbc51d = [ Id = "GPU-32bbc51d"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_2de75f0a = [ Id = "GPU-2de75f0a"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_14d10597 = [ Id = "GPU-14d10597"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_0a722a05 = [ Id = "GPU-0a722a05"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_51fd3af9 = [ Id = "GPU-51fd3af9"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_86ced96e = [ Id = "GPU-86ced96e"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_6c2c00e2 = [ Id = "GPU-6c2c00e2"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_f569202c = [ Id = "GPU-f569202c"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
TotalGPUs = 8
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3093
KeyboardIdle = 3263970
KFlops = 2979927
LastHeardFrom = 1731999790
LoadAvg = 0.201
Machine = "host00044.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 0
Mips = 37220
MyAddress = "<10.0.0.44:9618?addrs=10.0.0.44-9618&alias=host00044.cluster.example.org&noUDP&sock=startd_24706_b062>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00044.cluster.example.org"
NumPids = 20
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 16
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ifThenElse(TARGET.RequestGPUs =?= undefined || TARGET.RequestGPUs == 0,Cpus - TARGET.RequestCpus >= 1,true) && (TARGET.RequestCpus <= Cpus) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.44:9618?addrs=10.0.0.44-9618&alias=host00044.cluster.example.org&noUDP&sock=startd_24706_b062>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 72.603
TotalCpus = 96.0
TotalDisk = 450000000
TotalLoadAvg = 72.804
TotalMemory = 195584
TotalSlots = 11
TotalVirtualMemory = 206569472
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 8909
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 14605
UtsnameNodename = "host00044.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.45\"; port=9618; n=\"Internet\"; alias=\"host00045.cluster.example.org\"; spid=\"startd_45171_0c3e\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.grace","group_physics.erin","group_chem.dave" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 4,8,4 }
ChildMemory = { 8192,16384,8192 }
ChildName = { "slot1_1@host00045.cluster.example.org","slot1_2@host00045.cluster.example.org","slot1_3@host00045.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","erin@cluster.example.org","dave@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 1
ClockMin = 1346
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 1ce8e07b $"
ConsoleIdle = 2288317
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 48
CurrentRank = 0.0
DaemonStartTime = 1731276480
DetectedCpus = 64
DetectedMemory = 196096
Disk = 3549831147
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731444758
EnteredCurrentState = 1731444758
ExpectedMachineGracefulDrainingBadput = 3929526
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 204
KeyboardIdle = 2288259
KFlops = 1945998
LastHeardFrom = 1731999971
LoadAvg = 0.126
Machine = "host00045.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 162816
Mips = 32403
MyAddress = "<10.0.0.45:9618?addrs=10.0.0.45-9618&alias=host00045.cluster.example.org&noUDP&sock=startd_45171_0c3e>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00045.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 1
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.45:9618?addrs=10.0.0.45-9618&alias=host00045.cluster.example.org&noUDP&sock=startd_45171_0c3e>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 15.549
TotalCpus = 64.0
TotalDisk = 3600000000
TotalLoadAvg = 15.675
TotalMemory = 195584
TotalSlots = 4
TotalVirtualMemory = 207618048
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 6812
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 11757
UtsnameNodename = "host00045.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 166723584
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.46\"; port=9618; n=\"Internet\"; alias=\"host00046.cluster.example.org\"; spid=\"startd_79052_e02b\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.carol","group_chem.dave","group_physics.erin","group_physics.carol","group_physics.carol","group_physics.grace","group_chem.grace","group_bio.heidi","group_chem.frank","group_cms.alice" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,4,8,8,8,2,16,4,4,2 }
ChildMemory = { 16384,8192,32768,16384,16384,2048,16384,8192,4096,8192 }
ChildName = { "slot1_1@host00046.cluster.example.org","slot1_2@host00046.cluster.example.org","slot1_3@host00046.cluster.example.org","slot1_4@host00046.cluster.example.org","slot1_5@host00046.cluster.example.org","slot1_6@host00046.cluster.example.org","slot1_7@host00046.cluster.example.org","slot1_8@host00046.cluster.example.org","slot1_9@host00046.cluster.example.org","slot1_10@host00046.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","dave@cluster.example.org","erin@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","grace@cluster.example.org","grace@cluster.example.org","heidi@cluster.example.org","frank@cluster.example.org","alice@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 3
ClockMin = 558
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 82e0f900 $"
ConsoleIdle = 106065
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1725987129
DetectedCpus = 64
DetectedMemory = 264192
Disk = 336416148
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730930065
EnteredCurrentState = 1730930065
ExpectedMachineGracefulDrainingBadput = 884041
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 583
KeyboardIdle = 105795
KFlops = 2860862
LastHeardFrom = 1731999840
LoadAvg = 0.017
Machine = "host00046.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 133120
Mips = 27982
MyAddress = "<10.0.0.46:9618?addrs=10.0.0.46-9618&alias=host00046.cluster.example.org&noUDP&sock=startd_79052_e02b>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00046.cluster.example.org"
NumPids = 10
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_atlas.alice") * 5
RecentJobStarts = 19
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_bio" || TARGET.AccountingGroup == "group_physics" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "alice") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.46:9618?addrs=10.0.0.46-9618&alias=host00046.cluster.example.org&noUDP&sock=startd_79052_e02b>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 57.934
TotalCpus = 64.0
TotalDisk = 450000000
TotalLoadAvg = 57.951
TotalMemory = 262144
TotalSlots = 11
TotalVirtualMemory = 268435456
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 12405
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 1946
UtsnameNodename = "host00046.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 136314880
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.47\"; port=9618; n=\"Internet\"; alias=\"host00047.cluster.example.org\"; spid=\"startd_39064_b0a4\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.grace","group_physics.carol","group_chem.frank","group_physics.carol","group_physics.heidi","group_physics.grace","group_physics.carol","group_atlas.bob","group_physics.grace","group_physics.erin","group_bio.grace","group_cms.heidi","group_chem.alice" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,8,1,16,4,8,1,4,1,1,16,8,16 }
ChildMemory = { 16384,32768,4096,65536,16384,32768,2048,16384,4096,1024,65536,16384,32768 }
ChildName = { "slot1_1@host00047.cluster.example.org","slot1_2@host00047.cluster.example.org","slot1_3@host00047.cluster.example.org","slot1_4@host00047.cluster.example.org","slot1_5@host00047.cluster.example.org","slot1_6@host00047.cluster.example.org","slot1_7@host00047.cluster.example.org","slot1_8@host00047.cluster.example.org","slot1_9@host00047.cluster.example.org","slot1_10@host00047.cluster.example.org","slot1_11@host00047.cluster.example.org","slot1_12@host00047.cluster.example.org","slot1_13@host00047.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","carol@cluster.example.org","frank@cluster.example.org","carol@cluster.example.org","heidi@cluster.example.org","grace@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org","erin@cluster.example.org","grace@cluster.example.org","heidi@cluster.example.org","alice@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 523
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 58c85e0c $"
ConsoleIdle = 3104606
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 4
CurrentRank = 0.0
DaemonStartTime = 1730377730
DetectedCpus = 96
DetectedMemory = 393216
Disk = 66612703
EnteredCurrentActivity = 1731424967
EnteredCurrentState = 1731424967
ExpectedMachineGracefulDrainingBadput = 1874760
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1405
KeyboardIdle = 3104555
KFlops = 2628302
LastHeardFrom = 1731999820
LoadAvg = 0.185
Machine = "host00047.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 86016
Mips = 23809
MyAddress = "<10.0.0.47:9618?addrs=10.0.0.47-9618&alias=host00047.cluster.example.org&noUDP&sock=startd_39064_b0a4>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00047.cluster.example.org"
NumPids = 39
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_physics" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "carol") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.47:9618?addrs=10.0.0.47-9618&alias=host00047.cluster.example.org&noUDP&sock=startd_39064_b0a4>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 82.211
TotalCpus = 96.0
TotalDisk = 200000000
TotalLoadAvg = 82.396
TotalMemory = 392192
TotalSlots = 14
TotalVirtualMemory = 403701760
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 10682
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 17470
UtsnameNodename = "host00047.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 88080384
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.48\"; port=9618; n=\"Internet\"; alias=\"host00048.cluster.example.org\"; spid=\"startd_10235_197e\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.heidi" }
ChildActivity = { "Busy" }
ChildCpus = { 8 }
ChildMemory = { 15360 }
ChildName = { "slot1_1@host00048.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org" }
ChildState = { "Claimed" }
ClockDay = 0
ClockMin = 1043
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 5f8bfde6 $"
ConsoleIdle = 3411287
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1729313515
DetectedCpus = 8
DetectedMemory = 16384
Disk = 890462596
EnteredCurrentActivity = 1730367347
EnteredCurrentState = 1730367347
ExpectedMachineGracefulDrainingBadput = 1181698
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 60
KeyboardIdle = 3411071
KFlops = 3791224
LastHeardFrom = 1731999883
LoadAvg = 0.025
Machine = "host00048.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 0
Mips = 36009
MyAddress = "<10.0.0.48:9618?addrs=10.0.0.48-9618&alias=host00048.cluster.example.org&noUDP&sock=startd_10235_197e>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00048.cluster.example.org"
NumPids = 3
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_chem.alice") * 5
RecentJobStarts = 15
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 30 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "bob")
StartdIpAddr = "<10.0.0.48:9618?addrs=10.0.0.48-9618&alias=host00048.cluster.example.org&noUDP&sock=startd_10235_197e>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 7.957
TotalCpus = 8.0
TotalDisk = 900000000
TotalLoadAvg = 7.982
TotalMemory = 15360
TotalSlots = 2
TotalVirtualMemory = 20971520
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 4170
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 13482
UtsnameNodename = "host00048.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.49\"; port=9618; n=\"Internet\"; alias=\"host00049.cluster.example.org\"; spid=\"startd_88691_af9b\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.heidi","group_atlas.bob","group_atlas.erin","group_physics.bob" }
ChildActivity = { "Busy","Busy","Busy","Busy" }
ChildCpus = { 16,2,4,16 }
ChildMemory = { 65536,4096,8192,16384 }
ChildName = { "slot1_1@host00049.cluster.example.org","slot1_2@host00049.cluster.example.org","slot1_3@host00049.cluster.example.org","slot1_4@host00049.cluster.example.org" }
ChildRemoteOwner = { "heidi@cluster.example.org","bob@cluster.example.org","erin@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 330
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: cc74b3be $"
ConsoleIdle = 1791147
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 10
CurrentRank = 0.0
DaemonStartTime = 1728786949
DetectedCpus = 48
DetectedMemory = 393728
Disk = 393412193
EnteredCurrentActivity = 1730602478
EnteredCurrentState = 1730602478
ExpectedMachineGracefulDrainingBadput = 1930231
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_fc64e15e,GPUs_GPU_c429bad3 }
CUDACapability = 8.0
CUDAClockMhz = 1410.0
CUDAComputeUnits = 108
CUDACoresPerCU = 64
CUDADeviceName = "NVIDIA A100-SXM4-40GB"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 40338
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-fc64e15e, GPU-c429bad3"
GPUs = 0
GPUsMemoryUsage = undefined
GPUs_GPU_fc64e15e = [ Id = "GPU-fc64e15e"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_c429bad3 = [ Id = "GPU-c429bad3"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
TotalGPUs = 2
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2777
KeyboardIdle = 1790942
KFlops = 3172720
LastHeardFrom = 1731999707
LoadAvg = 0.012
Machine = "host00049.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 298496
Mips = 29405
MyAddress = "<10.0.0.49:9618?addrs=10.0.0.49-9618&alias=host00049.cluster.example.org&noUDP&sock=startd_88691_af9b>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00049.cluster.example.org"
NumPids = 8
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 13
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.49:9618?addrs=10.0.0.49-9618&alias=host00049.cluster.example.org&noUDP&sock=startd_88691_af9b>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 34.609
TotalCpus = 48.0
TotalDisk = 450000000
TotalLoadAvg = 34.621
TotalMemory = 392704
TotalSlots = 5
TotalVirtualMemory = 407371776
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 19286
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8532
UtsnameNodename = "host00049.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 305659904
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.50\"; port=9618; n=\"Internet\"; alias=\"host00050.cluster.example.org\"; spid=\"startd_53761_8d3d\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.carol","group_atlas.dave","group_bio.heidi","group_chem.grace","group_bio.heidi","group_physics.bob","group_bio.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 16,8,1,8,2,16,13 }
ChildMemory = { 32768,8192,4096,8192,8192,16384,53248 }
ChildName = { "slot1_1@host00050.cluster.example.org","slot1_2@host00050.cluster.example.org","slot1_3@host00050.cluster.example.org","slot1_4@host00050.cluster.example.org","slot1_5@host00050.cluster.example.org","slot1_6@host00050.cluster.example.org","slot1_7@host00050.cluster.example.org" }
ChildRemoteOwner = { "carol@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org","grace@cluster.example.org","heidi@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 1141
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 24.0.1 2024-10-31 BuildID: 769745 PackageID: 24.0.1-1 GitSHA: 932307e5 $"
ConsoleIdle = 2715583
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1728958754
DetectedCpus = 64
DetectedMemory = 196608
Disk = 1725072821
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731549159
EnteredCurrentState = 1731549159
ExpectedMachineGracefulDrainingBadput = 2430866
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1220
KeyboardIdle = 2715074
KFlops = 3066970
LastHeardFrom = 1731999868
LoadAvg = 0.231
Machine = "host00050.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 64512
Mips = 36610
MyAddress = "<10.0.0.50:9618?addrs=10.0.0.50-9618&alias=host00050.cluster.example.org&noUDP&sock=startd_53761_8d3d>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00050.cluster.example.org"
NumPids = 14
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 14
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 10 * 60 || LoadAvg < 0.5) && (TARGET.Owner =!= "erin")
StartdIpAddr = "<10.0.0.50:9618?addrs=10.0.0.50-9618&alias=host00050.cluster.example.org&noUDP&sock=startd_53761_8d3d>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 63.238
TotalCpus = 64.0
TotalDisk = 1800000000
TotalLoadAvg = 63.469
TotalMemory = 195584
TotalSlots = 8
TotalVirtualMemory = 207618048
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 5522
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 12669
UtsnameNodename = "host00050.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 66060288
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.51\"; port=9618; n=\"Internet\"; alias=\"host00051.cluster.example.org\"; spid=\"startd_6186_2f7c\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.grace","group_chem.bob","group_bio.grace","group_physics.erin","group_bio.grace","group_physics.alice","group_bio.dave","group_physics.frank","group_chem.grace" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 2,4,8,8,8,8,1,1,4 }
ChildMemory = { 2048,4096,16384,16384,8192,8192,2048,4096,4096 }
ChildName = { "slot1_1@host00051.cluster.example.org","slot1_2@host00051.cluster.example.org","slot1_3@host00051.cluster.example.org","slot1_4@host00051.cluster.example.org","slot1_5@host00051.cluster.example.org","slot1_6@host00051.cluster.example.org","slot1_7@host00051.cluster.example.org","slot1_8@host00051.cluster.example.org","slot1_9@host00051.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org","erin@cluster.example.org","grace@cluster.example.org","alice@cluster.example.org","dave@cluster.example.org","frank@cluster.example.org","grace@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 4
ClockMin = 1340
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 6f48e183 $"
ConsoleIdle = 2046012
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 4
CurrentRank = 0.0
DaemonStartTime = 1727899800
DetectedCpus = 48
DetectedMemory = 98816
Disk = 119793822
EnteredCurrentActivity = 1731294088
EnteredCurrentState = 1731294088
ExpectedMachineGracefulDrainingBadput = 4003208
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1710
KeyboardIdle = 2045910
KFlops = 1373001
LastHeardFrom = 1731999936
LoadAvg = 0.087
Machine = "host00051.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 32256
Mips = 37093
MyAddress = "<10.0.0.51:9618?addrs=10.0.0.51-9618&alias=host00051.cluster.example.org&noUDP&sock=startd_6186_2f7c>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00051.cluster.example.org"
NumPids = 9
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = (TARGET.AccountingGroup =?= "group_cms.alice") * 5
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 30 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.51:9618?addrs=10.0.0.51-9618&alias=host00051.cluster.example.org&noUDP&sock=startd_6186_2f7c>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 41.36
TotalCpus = 48.0
TotalDisk = 200000000
TotalLoadAvg = 41.447
TotalMemory = 97792
TotalSlots = 10
TotalVirtualMemory = 100139008
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 18585
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 16591
UtsnameNodename = "host00051.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 33030144
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.52\"; port=9618; n=\"Internet\"; alias=\"host00052.cluster.example.org\"; spid=\"startd_39940_0166\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.grace","group_atlas.dave","group_bio.carol","group_atlas.dave","group_chem.bob" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 8,8,2,8,6 }
ChildMemory = { 32768,8192,4096,8192,6144 }
ChildName = { "slot1_1@host00052.cluster.example.org","slot1_2@host00052.cluster.example.org","slot1_3@host00052.cluster.example.org","slot1_4@host00052.cluster.example.org","slot1_5@host00052.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","dave@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 1220
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: dc143eba $"
ConsoleIdle = 2269171
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1727344690
DetectedCpus = 32
DetectedMemory = 67584
Disk = 3542374035
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731597689
EnteredCurrentState = 1731597689
ExpectedMachineGracefulDrainingBadput = 1833659
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1799
KeyboardIdle = 2268622
KFlops = 2049166
LastHeardFrom = 1731999917
LoadAvg = 0.191
Machine = "host00052.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 6144
Mips = 36777
MyAddress = "<10.0.0.52:9618?addrs=10.0.0.52-9618&alias=host00052.cluster.example.org&noUDP&sock=startd_39940_0166>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00052.cluster.example.org"
NumPids = 15
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "erin",10,0)
RecentJobStarts = 1
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((ClockDay == 0 || ClockDay == 6) || ClockMin < 9 * 60 || ClockMin > 18 * 60 || TARGET.RequestMemory <= 2048) && (TARGET.RequestCpus <= Cpus)
StartdIpAddr = "<10.0.0.52:9618?addrs=10.0.0.52-9618&alias=host00052.cluster.example.org&noUDP&sock=startd_39940_0166>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 29.813
TotalCpus = 32.0
TotalDisk = 3600000000
TotalLoadAvg = 30.004
TotalMemory = 65536
TotalSlots = 6
TotalVirtualMemory = 70254592
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 12711
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8677
UtsnameNodename = "host00052.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 6291456
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.53\"; port=9618; n=\"Internet\"; alias=\"host00053.cluster.example.org\"; spid=\"startd_34753_6caf\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_atlas.grace","group_physics.grace","group_physics.bob","group_bio.grace","group_bio.alice","group_chem.grace","group_physics.dave","group_bio.bob","group_chem.dave","group_chem.heidi","group_physics.grace","group_chem.carol","group_atlas.carol","group_cms.dave","group_bio.bob" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 16,8,4,16,4,2,4,4,1,1,2,16,1,4,13 }
ChildMemory = { 32768,8192,8192,32768,16384,8192,4096,4096,2048,2048,4096,32768,2048,4096,53248 }
ChildName = { "slot1_1@host00053.cluster.example.org","slot1_2@host00053.cluster.example.org","slot1_3@host00053.cluster.example.org","slot1_4@host00053.cluster.example.org","slot1_5@host00053.cluster.example.org","slot1_6@host00053.cluster.example.org","slot1_7@host00053.cluster.example.org","slot1_8@host00053.cluster.example.org","slot1_9@host00053.cluster.example.org","slot1_10@host00053.cluster.example.org","slot1_11@host00053.cluster.example.org","slot1_12@host00053.cluster.example.org","slot1_13@host00053.cluster.example.org","slot1_14@host00053.cluster.example.org","slot1_15@host00053.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","grace@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org","alice@cluster.example.org","grace@cluster.example.org","dave@cluster.example.org","bob@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org","grace@cluster.example.org","carol@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 6
ClockMin = 1153
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: cf73bd51 $"
ConsoleIdle = 1359053
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1726615066
DetectedCpus = 96
DetectedMemory = 393216
Disk = 717832828
EnteredCurrentActivity = 1730677058
EnteredCurrentState = 1730677058
ExpectedMachineGracefulDrainingBadput = 1347759
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3216
KeyboardIdle = 1358979
KFlops = 2587156
LastHeardFrom = 1731999723
LoadAvg = 0.166
Machine = "host00053.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 177664
Mips = 20463
MyAddress = "<10.0.0.53:9618?addrs=10.0.0.53-9618&alias=host00053.cluster.example.org&noUDP&sock=startd_34753_6caf>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00053.cluster.example.org"
NumPids = 30
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 5
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 10 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.53:9618?addrs=10.0.0.53-9618&alias=host00053.cluster.example.org&noUDP&sock=startd_34753_6caf>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 88.883
TotalCpus = 96.0
TotalDisk = 900000000
TotalLoadAvg = 89.049
TotalMemory = 392704
TotalSlots = 16
TotalVirtualMemory = 403177472
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 16336
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 8055
UtsnameNodename = "host00053.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 181927936
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.54\"; port=9618; n=\"Internet\"; alias=\"host00054.cluster.example.org\"; spid=\"startd_27726_2540\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.grace","group_chem.grace","group_atlas.frank","group_cms.dave","group_atlas.heidi" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 1,8,2,8,4 }
ChildMemory = { 2048,16384,8192,16384,16384 }
ChildName = { "slot1_1@host00054.cluster.example.org","slot1_2@host00054.cluster.example.org","slot1_3@host00054.cluster.example.org","slot1_4@host00054.cluster.example.org","slot1_5@host00054.cluster.example.org" }
ChildRemoteOwner = { "grace@cluster.example.org","grace@cluster.example.org","frank@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 752
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 9909b468 $"
ConsoleIdle = 3990235
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 1
CurrentRank = 0.0
DaemonStartTime = 1729984854
DetectedCpus = 24
DetectedMemory = 198144
Disk = 142039354
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730393941
EnteredCurrentState = 1730393941
ExpectedMachineGracefulDrainingBadput = 887614
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 1859
KeyboardIdle = 3990105
KFlops = 1219482
LastHeardFrom = 1731999783
LoadAvg = 0.111
Machine = "host00054.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 136704
Mips = 21009
MyAddress = "<10.0.0.54:9618?addrs=10.0.0.54-9618&alias=host00054.cluster.example.org&noUDP&sock=startd_27726_2540>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00054.cluster.example.org"
NumPids = 15
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 6
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((ClockDay == 0 || ClockDay == 6) || ClockMin < 8 * 60 || ClockMin > 19 * 60 || TARGET.RequestMemory <= 4096) && (TARGET.RequestCpus <= Cpus)
StartdIpAddr = "<10.0.0.54:9618?addrs=10.0.0.54-9618&alias=host00054.cluster.example.org&noUDP&sock=startd_27726_2540>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 20.902
TotalCpus = 24.0
TotalDisk = 200000000
TotalLoadAvg = 21.013
TotalMemory = 196096
TotalSlots = 6
TotalVirtualMemory = 204996608
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 16129
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 2121
UtsnameNodename = "host00054.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 139984896
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.55\"; port=9618; n=\"Internet\"; alias=\"host00055.cluster.example.org\"; spid=\"startd_50239_6873\"; noUDP=true; ]}"
Arch = "aarch64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_atlas.bob","group_chem.bob","group_cms.grace","group_atlas.heidi","group_physics.frank","group_cms.dave","group_chem.alice","group_atlas.grace","group_physics.dave","group_chem.heidi","group_bio.dave","group_bio.carol","group_cms.dave" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 2,1,8,8,2,8,4,8,1,8,4,2,1 }
ChildMemory = { 8192,1024,8192,16384,2048,16384,8192,16384,4096,32768,8192,8192,512 }
ChildName = { "slot1_1@host00055.cluster.example.org","slot1_2@host00055.cluster.example.org","slot1_3@host00055.cluster.example.org","slot1_4@host00055.cluster.example.org","slot1_5@host00055.cluster.example.org","slot1_6@host00055.cluster.example.org","slot1_7@host00055.cluster.example.org","slot1_8@host00055.cluster.example.org","slot1_9@host00055.cluster.example.org","slot1_10@host00055.cluster.example.org","slot1_11@host00055.cluster.example.org","slot1_12@host00055.cluster.example.org","slot1_13@host00055.cluster.example.org" }
ChildRemoteOwner = { "bob@cluster.example.org","bob@cluster.example.org","grace@cluster.example.org","heidi@cluster.example.org","frank@cluster.example.org","dave@cluster.example.org","alice@cluster.example.org","grace@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org","dave@cluster.example.org","carol@cluster.example.org","dave@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 5
ClockMin = 481
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: aarch64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 6678273c $"
ConsoleIdle = 2821
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 7
CurrentRank = 0.0
DaemonStartTime = 1726551641
DetectedCpus = 64
DetectedMemory = 131584
Disk = 777089809
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730795276
EnteredCurrentState = 1730795276
ExpectedMachineGracefulDrainingBadput = 2391718
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 61
KeyboardIdle = 2734
KFlops = 3569684
LastHeardFrom = 1731999952
LoadAvg = 0.476
Machine = "host00055.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 0
Mips = 30644
MyAddress = "<10.0.0.55:9618?addrs=10.0.0.55-9618&alias=host00055.cluster.example.org&noUDP&sock=startd_50239_6873>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00055.cluster.example.org"
NumPids = 26
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 15 * 60 || LoadAvg < 0.3) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.55:9618?addrs=10.0.0.55-9618&alias=host00055.cluster.example.org&noUDP&sock=startd_50239_6873>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 51.345
TotalCpus = 64.0
TotalDisk = 900000000
TotalLoadAvg = 51.821
TotalMemory = 130560
TotalSlots = 14
TotalVirtualMemory = 137887744
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 5679
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 9903
UtsnameNodename = "host00055.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.aarch64"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.56\"; port=9618; n=\"Internet\"; alias=\"host00056.cluster.example.org\"; spid=\"startd_97320_7041\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 0
ClockMin = 266
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 3f89d130 $"
ConsoleIdle = 2494058
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 8
CurrentRank = 0.0
DaemonStartTime = 1731376333
DetectedCpus = 8
DetectedMemory = 25600
Disk = 1800000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731475850
EnteredCurrentState = 1731475850
ExpectedMachineGracefulDrainingBadput = 2214444
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_c7f87828,GPUs_GPU_599ef45b,GPUs_GPU_d87aca05,GPUs_GPU_21fbce82 }
CUDACapability = 8.0
CUDAClockMhz = 1410.0
CUDAComputeUnits = 108
CUDACoresPerCU = 64
CUDADeviceName = "NVIDIA A100-SXM4-40GB"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 40338
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-c7f87828, GPU-599ef45b, GPU-d87aca05, GPU-21fbce82"
GPUs = 4
GPUsMemoryUsage = undefined
GPUs_GPU_c7f87828 = [ Id = "GPU-c7f87828"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_599ef45b = [ Id = "GPU-599ef45b"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_d87aca05 = [ Id = "GPU-d87aca05"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
GPUs_GPU_21fbce82 = [ Id = "GPU-21fbce82"; Capability = 8.0; DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = 40338; ECCEnabled = true; ]
TotalGPUs = 4
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 2704
KeyboardIdle = 2493528
KFlops = 3686347
LastHeardFrom = 1731999901
LoadAvg = 0.221
Machine = "host00056.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 23552
Mips = 17156
MyAddress = "<10.0.0.56:9618?addrs=10.0.0.56-9618&alias=host00056.cluster.example.org&noUDP&sock=startd_97320_7041>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00056.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 4
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ifThenElse(TARGET.RequestGPUs =?= undefined || TARGET.RequestGPUs == 0,Cpus - TARGET.RequestCpus >= 2,true) && (TARGET.RequestCpus <= Cpus) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.56:9618?addrs=10.0.0.56-9618&alias=host00056.cluster.example.org&noUDP&sock=startd_97320_7041>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 8.0
TotalDisk = 1800000000
TotalLoadAvg = 0.221
TotalMemory = 23552
TotalSlots = 1
TotalVirtualMemory = 25165824
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 4169
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 1195
UtsnameNodename = "host00056.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 24117248
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.57\"; port=9618; n=\"Internet\"; alias=\"host00057.cluster.example.org\"; spid=\"startd_79111_8e75\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_chem.frank" }
ChildActivity = { "Busy" }
ChildCpus = { 4 }
ChildMemory = { 15872 }
ChildName = { "slot1_1@host00057.cluster.example.org" }
ChildRemoteOwner = { "frank@cluster.example.org" }
ChildState = { "Claimed" }
ClockDay = 1
ClockMin = 1423
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Windows_10 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: b6325f05 $"
ConsoleIdle = 1471235
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 4
CurrentRank = 0.0
DaemonStartTime = 1729417825
DetectedCpus = 8
DetectedMemory = 16384
Disk = 1784702964
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731346666
EnteredCurrentState = 1731346666
ExpectedMachineGracefulDrainingBadput = 2321926
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 742
KeyboardIdle = 1470838
KFlops = 1033467
LastHeardFrom = 1731999831
LoadAvg = 0.064
Machine = "host00057.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 0
Mips = 23812
MyAddress = "<10.0.0.57:9618?addrs=10.0.0.57-9618&alias=host00057.cluster.example.org&noUDP&sock=startd_79111_8e75>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00057.cluster.example.org"
NumPids = 2
OpSys = "WINDOWS"
OpSysAndVer = "WINDOWS1000"
OpSysLongName = "Windows 10 Enterprise"
OpSysMajorVer = 10
OpSysName = "Windows"
OpSysVer = 1000
PartitionableSlot = true
Rank = TARGET.RequestCpus
RecentJobStarts = 2
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_physics" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "alice") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.57:9618?addrs=10.0.0.57-9618&alias=host00057.cluster.example.org&noUDP&sock=startd_79111_8e75>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 3.575
TotalCpus = 8.0
TotalDisk = 1800000000
TotalLoadAvg = 3.639
TotalMemory = 15872
TotalSlots = 2
TotalVirtualMemory = 17301504
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 18227
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 7661
UtsnameNodename = "host00057.cluster.example.org"
UtsnameRelease = "10.0.19045"
VirtualMemory = 0
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.58\"; port=9618; n=\"Internet\"; alias=\"host00058.cluster.example.org\"; spid=\"startd_27827_a838\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_bio.dave","group_physics.bob","group_chem.bob" }
ChildActivity = { "Busy","Busy","Busy" }
ChildCpus = { 8,4,8 }
ChildMemory = { 8192,4096,16384 }
ChildName = { "slot1_1@host00058.cluster.example.org","slot1_2@host00058.cluster.example.org","slot1_3@host00058.cluster.example.org" }
ChildRemoteOwner = { "dave@cluster.example.org","bob@cluster.example.org","bob@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed" }
ClockDay = 2
ClockMin = 1271
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 23d308b2 $"
ConsoleIdle = 1059569
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 44
CurrentRank = 0.0
DaemonStartTime = 1726763672
DetectedCpus = 64
DetectedMemory = 525824
Disk = 414561608
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731097445
EnteredCurrentState = 1731097445
ExpectedMachineGracefulDrainingBadput = 388095
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 466
KeyboardIdle = 1059285
KFlops = 2368893
LastHeardFrom = 1731999944
LoadAvg = 0.183
Machine = "host00058.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 495104
Mips = 34057
MyAddress = "<10.0.0.58:9618?addrs=10.0.0.58-9618&alias=host00058.cluster.example.org&noUDP&sock=startd_27827_a838>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00058.cluster.example.org"
NumPids = 6
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = ifThenElse(TARGET.Owner == "heidi",10,0)
RecentJobStarts = 18
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_bio" || TARGET.AccountingGroup == "group_cms" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "frank") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.58:9618?addrs=10.0.0.58-9618&alias=host00058.cluster.example.org&noUDP&sock=startd_27827_a838>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 17.985
TotalCpus = 64.0
TotalDisk = 450000000
TotalLoadAvg = 18.168
TotalMemory = 523776
TotalSlots = 4
TotalVirtualMemory = 537395200
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 5889
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 18391
UtsnameNodename = "host00058.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 506986496
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.59\"; port=9618; n=\"Internet\"; alias=\"host00059.cluster.example.org\"; spid=\"startd_60269_7ee1\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 1
ClockMin = 1209
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-CentOS_7 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 30854e3d $"
ConsoleIdle = 548531
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 64
CurrentRank = 0.0
DaemonStartTime = 1730453476
DetectedCpus = 64
DetectedMemory = 524288
Disk = 1800000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730979082
EnteredCurrentState = 1730979082
ExpectedMachineGracefulDrainingBadput = 4419984
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3399
KeyboardIdle = 548176
KFlops = 2795111
LastHeardFrom = 1731999916
LoadAvg = 0.119
Machine = "host00059.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 523776
Mips = 22640
MyAddress = "<10.0.0.59:9618?addrs=10.0.0.59-9618&alias=host00059.cluster.example.org&noUDP&sock=startd_60269_7ee1>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00059.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "CentOS7"
OpSysLongName = "CentOS Linux release 7.9.2009 (Core)"
OpSysMajorVer = 7
OpSysName = "CentOS"
OpSysVer = 709
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 0
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || (State != "Unclaimed" && State != "Owner"))) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.59:9618?addrs=10.0.0.59-9618&alias=host00059.cluster.example.org&noUDP&sock=startd_60269_7ee1>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 64.0
TotalDisk = 1800000000
TotalLoadAvg = 0.119
TotalMemory = 523776
TotalSlots = 1
TotalVirtualMemory = 539492352
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 16726
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 17555
UtsnameNodename = "host00059.cluster.example.org"
UtsnameRelease = "3.10.0-1160.119.1.el7.x86_64"
VirtualMemory = 536346624
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.60\"; port=9618; n=\"Internet\"; alias=\"host00060.cluster.example.org\"; spid=\"startd_8439_4f8e\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 5
ClockMin = 77
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Ubuntu_22 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: a69eb227 $"
ConsoleIdle = 1734374
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 32
CurrentRank = 0.0
DaemonStartTime = 1726364785
DetectedCpus = 32
DetectedMemory = 131584
Disk = 450000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730209105
EnteredCurrentState = 1730209105
ExpectedMachineGracefulDrainingBadput = 1032339
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 580
KeyboardIdle = 1734266
KFlops = 1260631
LastHeardFrom = 1731999892
LoadAvg = 0.204
Machine = "host00060.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 130560
Mips = 32973
MyAddress = "<10.0.0.60:9618?addrs=10.0.0.60-9618&alias=host00060.cluster.example.org&noUDP&sock=startd_8439_4f8e>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00060.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "Ubuntu22"
OpSysLongName = "Ubuntu 22.04.4 LTS"
OpSysMajorVer = 22
OpSysName = "Ubuntu"
OpSysVer = 2204
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 6
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_cms" || TARGET.AccountingGroup == "group_bio" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "grace") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.60:9618?addrs=10.0.0.60-9618&alias=host00060.cluster.example.org&noUDP&sock=startd_8439_4f8e>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 32.0
TotalDisk = 450000000
TotalLoadAvg = 0.204
TotalMemory = 130560
TotalSlots = 1
TotalVirtualMemory = 137887744
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 9363
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 15340
UtsnameNodename = "host00060.cluster.example.org"
UtsnameRelease = "5.15.0-113-generic"
VirtualMemory = 133693440
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.61\"; port=9618; n=\"Internet\"; alias=\"host00061.cluster.example.org\"; spid=\"startd_61960_6bbc\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = { "group_cms.frank","group_bio.carol","group_atlas.bob","group_cms.carol","group_bio.alice","group_bio.dave","group_cms.heidi","group_physics.erin","group_physics.erin","group_bio.heidi" }
ChildActivity = { "Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy","Busy" }
ChildCpus = { 2,8,4,16,4,2,1,4,4,3 }
ChildMemory = { 8192,32768,8192,65536,4096,4096,2048,8192,8192,3072 }
ChildName = { "slot1_1@host00061.cluster.example.org","slot1_2@host00061.cluster.example.org","slot1_3@host00061.cluster.example.org","slot1_4@host00061.cluster.example.org","slot1_5@host00061.cluster.example.org","slot1_6@host00061.cluster.example.org","slot1_7@host00061.cluster.example.org","slot1_8@host00061.cluster.example.org","slot1_9@host00061.cluster.example.org","slot1_10@host00061.cluster.example.org" }
ChildRemoteOwner = { "frank@cluster.example.org","carol@cluster.example.org","bob@cluster.example.org","carol@cluster.example.org","alice@cluster.example.org","dave@cluster.example.org","heidi@cluster.example.org","erin@cluster.example.org","erin@cluster.example.org","heidi@cluster.example.org" }
ChildState = { "Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed","Claimed" }
ClockDay = 3
ClockMin = 744
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-Rocky_8 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: 51f9d183 $"
ConsoleIdle = 3055
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
ConsumptionGPUs = quantize(target.RequestGPUs,{ 1 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 0
CurrentRank = 0.0
DaemonStartTime = 1727621150
DetectedCpus = 48
DetectedMemory = 393216
Disk = 344238042
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1731276305
EnteredCurrentState = 1731276305
ExpectedMachineGracefulDrainingBadput = 2081625
FileSystemDomain = "cluster.example.org"
AvailableGPUs = { GPUs_GPU_d7f21cef,GPUs_GPU_ac838704,GPUs_GPU_65e92f10,GPUs_GPU_22d0fb5f }
CUDACapability = 7.5
CUDAClockMhz = 1410.0
CUDAComputeUnits = 68
CUDACoresPerCU = 64
CUDADeviceName = "NVIDIA GeForce RTX 2080 Ti"
CUDADriverVersion = 12.4
CUDAECCEnabled = true
CUDAGlobalMemoryMb = 11012
CUDAMaxSupportedVersion = 12040
DetectedGPUs = "GPU-d7f21cef, GPU-ac838704, GPU-65e92f10, GPU-22d0fb5f"
GPUs = 0
GPUsMemoryUsage = undefined
GPUs_GPU_d7f21cef = [ Id = "GPU-d7f21cef"; Capability = 7.5; DeviceName = "NVIDIA GeForce RTX 2080 Ti"; GlobalMemoryMb = 11012; ECCEnabled = true; ]
GPUs_GPU_ac838704 = [ Id = "GPU-ac838704"; Capability = 7.5; DeviceName = "NVIDIA GeForce RTX 2080 Ti"; GlobalMemoryMb = 11012; ECCEnabled = true; ]
GPUs_GPU_65e92f10 = [ Id = "GPU-65e92f10"; Capability = 7.5; DeviceName = "NVIDIA GeForce RTX 2080 Ti"; GlobalMemoryMb = 11012; ECCEnabled = true; ]
GPUs_GPU_22d0fb5f = [ Id = "GPU-22d0fb5f"; Capability = 7.5; DeviceName = "NVIDIA GeForce RTX 2080 Ti"; GlobalMemoryMb = 11012; ECCEnabled = true; ]
TotalGPUs = 4
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = false
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 3108
KeyboardIdle = 2897
KFlops = 3427274
LastHeardFrom = 1731999888
LoadAvg = 1.872
Machine = "host00061.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap GPUs"
MaxJobRetirementTime = 0
Memory = 248320
Mips = 37088
MyAddress = "<10.0.0.61:9618?addrs=10.0.0.61-9618&alias=host00061.cluster.example.org&noUDP&sock=startd_61960_6bbc>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00061.cluster.example.org"
NumPids = 20
OpSys = "LINUX"
OpSysAndVer = "Rocky8"
OpSysLongName = "Rocky Linux release 8.10 (Green Obsidian)"
OpSysMajorVer = 8
OpSysName = "Rocky"
OpSysVer = 810
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 19
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = ifThenElse(TARGET.RequestGPUs =?= undefined || TARGET.RequestGPUs == 0,Cpus - TARGET.RequestCpus >= 4,true) && (TARGET.RequestCpus <= Cpus) && (TARGET.Owner =!= "baduser")
StartdIpAddr = "<10.0.0.61:9618?addrs=10.0.0.61-9618&alias=host00061.cluster.example.org&noUDP&sock=startd_61960_6bbc>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 44.049
TotalCpus = 48.0
TotalDisk = 450000000
TotalLoadAvg = 45.921
TotalMemory = 392704
TotalSlots = 11
TotalVirtualMemory = 408420352
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 8794
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 359
UtsnameNodename = "host00061.cluster.example.org"
UtsnameRelease = "4.18.0-553.5.1.el8_10.x86_64"
VirtualMemory = 254279680
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)) && ifThenElse(TARGET.RequestGPUs =!= undefined,MY.ConsumptionGPUs <= MY.GPUs,true))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.62\"; port=9618; n=\"Internet\"; alias=\"host00062.cluster.example.org\"; spid=\"startd_38200_4cb3\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 1
ClockMin = 629
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.10.1 2024-09-12 BuildID: 758312 PackageID: 23.10.1-1 GitSHA: bfce47d6 $"
ConsoleIdle = 698142
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 64
CurrentRank = 0.0
DaemonStartTime = 1728578377
DetectedCpus = 64
DetectedMemory = 525312
Disk = 450000000
EnteredCurrentActivity = 1731247732
EnteredCurrentState = 1731247732
ExpectedMachineGracefulDrainingBadput = 2837244
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 291
KeyboardIdle = 697970
KFlops = 1241244
LastHeardFrom = 1731999935
LoadAvg = 0.168
Machine = "host00062.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 524288
Mips = 18634
MyAddress = "<10.0.0.62:9618?addrs=10.0.0.62-9618&alias=host00062.cluster.example.org&noUDP&sock=startd_38200_4cb3>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00062.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 12
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.AccountingGroup =?= undefined || TARGET.AccountingGroup == "group_physics" || TARGET.AccountingGroup == "group_bio" || TotalLoadAvg < 0.6 * TotalCpus) && (TARGET.Owner =!= "erin") && (TARGET.RequestMemory <= Memory)
StartdIpAddr = "<10.0.0.62:9618?addrs=10.0.0.62-9618&alias=host00062.cluster.example.org&noUDP&sock=startd_38200_4cb3>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 64.0
TotalDisk = 450000000
TotalLoadAvg = 0.168
TotalMemory = 524288
TotalSlots = 1
TotalVirtualMemory = 542113792
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 11107
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 15534
UtsnameNodename = "host00062.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 536870912
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

Activity = "Idle"
AddressV1 = "{[ p=\"primary\"; a=\"10.0.0.63\"; port=9618; n=\"Internet\"; alias=\"host00063.cluster.example.org\"; spid=\"startd_22944_95fe\"; noUDP=true; ]}"
Arch = "X86_64"
AuthenticatedIdentity = "condor@cluster.example.org"
ChildAccountingGroup = {  }
ChildActivity = {  }
ChildCpus = {  }
ChildMemory = {  }
ChildName = {  }
ChildRemoteOwner = {  }
ChildState = {  }
ClockDay = 0
ClockMin = 785
CondorLoadAvg = 0.0
CondorPlatform = "$CondorPlatform: X86_64-AlmaLinux_9 $"
CondorVersion = "$CondorVersion: 23.0.12 2024-06-13 BuildID: 739441 PackageID: 23.0.12-1 GitSHA: 208b1f3e $"
ConsoleIdle = 2139842
ConsumptionCpus = quantize(target.RequestCpus,{ 1 })
ConsumptionDisk = quantize(target.RequestDisk,{ 1024 })
ConsumptionMemory = quantize(target.RequestMemory,{ 128 })
CpuBusy = ((LoadAvg - CondorLoadAvg) >= 0.5)
Cpus = 8
CurrentRank = 0.0
DaemonStartTime = 1730667344
DetectedCpus = 8
DetectedMemory = 32768
Disk = 1800000000
DockerVersion = "Docker version 24.0.7, build afdd53b"
HasDocker = true
EnteredCurrentActivity = 1730805611
EnteredCurrentState = 1730805611
ExpectedMachineGracefulDrainingBadput = 4320514
FileSystemDomain = "cluster.example.org"
HasFileTransfer = true
HasFileTransferPluginMethods = "box,data,dav,davs,ftp,gdrive,gs,http,https,onedrive,osdf,s3,stash"
HasJobTransferPlugins = true
HasReconnect = true
HasSelfCheckpointTransfers = true
HasSingularity = true
IsOwner = (START =?= false)
IsValidCheckpointPlatform = (TARGET.JobUniverse =!= 1 || ((MY.CheckpointPlatform =!= undefined) && ((TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0))))
IsWakeAble = false
JobStarts = 4229
KeyboardIdle = 2139360
KFlops = 3408455
LastHeardFrom = 1731999849
LoadAvg = 0.049
Machine = "host00063.cluster.example.org"
MachineMaxVacateTime = 10 * 60
MachineResources = "Cpus Memory Disk Swap"
MaxJobRetirementTime = 0
Memory = 31744
Mips = 19079
MyAddress = "<10.0.0.63:9618?addrs=10.0.0.63-9618&alias=host00063.cluster.example.org&noUDP&sock=startd_22944_95fe>"
MyCurrentTime = 1732000000
MyType = "Machine"
Name = "slot1@host00063.cluster.example.org"
NumPids = 0
OpSys = "LINUX"
OpSysAndVer = "AlmaLinux9"
OpSysLongName = "AlmaLinux release 9.4 (Seafoam Ocelot)"
OpSysMajorVer = 9
OpSysName = "AlmaLinux"
OpSysVer = 904
PartitionableSlot = true
Rank = 0.0
RecentJobStarts = 1
Requirements = START && (WithinResourceLimits)
SlotID = 1
SlotType = "Partitionable"
SlotTypeID = 1
SlotWeight = Cpus
START = (TARGET.RequestCpus <= Cpus) && (TARGET.RequestMemory <= Memory) && (KeyboardIdle > 5 * 60 || LoadAvg < 0.8) && (TARGET.Owner =!= "mallory")
StartdIpAddr = "<10.0.0.63:9618?addrs=10.0.0.63-9618&alias=host00063.cluster.example.org&noUDP&sock=startd_22944_95fe>"
State = "Unclaimed"
TargetType = "Job"
TotalCondorLoadAvg = 0.0
TotalCpus = 8.0
TotalDisk = 1800000000
TotalLoadAvg = 0.049
TotalMemory = 31744
TotalSlots = 1
TotalVirtualMemory = 38797312
UidDomain = "cluster.example.org"
Unhibernate = MY.MachineLastMatchTime =!= undefined
UpdateSequenceNumber = 5043
UpdatesHistory = "0x00000000000000000000000000000000"
UpdatesTotal = 11599
UtsnameNodename = "host00063.cluster.example.org"
UtsnameRelease = "5.14.0-427.22.1.el9_4.x86_64"
VirtualMemory = 32505856
WithinResourceLimits = (ifThenElse(TARGET._condor_RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET._condor_RequestCpus <= MY.Cpus,ifThenElse(TARGET.RequestCpus =!= undefined,MY.ConsumptionCpus > 0 && TARGET.RequestCpus <= MY.Cpus,1 <= MY.Cpus)) && ifThenElse(TARGET._condor_RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET._condor_RequestMemory <= MY.Memory,ifThenElse(TARGET.RequestMemory =!= undefined,MY.ConsumptionMemory > 0 && TARGET.RequestMemory <= MY.Memory,false)) && ifThenElse(TARGET._condor_RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET._condor_RequestDisk <= MY.Disk,ifThenElse(TARGET.RequestDisk =!= undefined,MY.ConsumptionDisk > 0 && TARGET.RequestDisk <= MY.Disk,false)))

