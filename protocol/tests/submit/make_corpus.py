#!/usr/bin/env python3
"""Writes the submit corpus (corpus/*.sub and the files they name).

Run once after editing; the output is committed so that a change shows in
review.  Files are shaped like real ones: the HTCondor manual's submit
examples, the patterns its users write (sweeps, `queue from` CSV files,
conditionals, includes, DAG node files), each submit command Starling or
HTCondor knows, and seeded combinations of commands and macros.

    python3 protocol/tests/submit/make_corpus.py
"""
import os
import random
import shutil
import stat

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")

CASES = {}


def case(name, text):
    assert name not in CASES, name
    CASES[name] = text.strip("\n") + "\n"


AUX = {
    "a.out": "#!/bin/sh\necho hello\n",
    "analyze": "#!/bin/sh\nexit 0\n",
    "in.txt": "input\n",
    "a.txt": "a\n",
    "b.txt": "b\n",
    "data/x1.dat": "1\n",
    "data/x2.dat": "2\n",
    "data/x3.dat": "3\n",
    "x1.dat": "1\n",
    "x2.dat": "2\n",
    "params.csv": "1, alpha\n2, beta\n3, gamma\n",
    "args.txt": "-n 1 -v\n-n 2\n-n 3 -q\n",
    "files.txt": "a.txt\nb.txt\n",
    "common.inc": "executable = a.out\nrequest_memory = 2GB\nlog = job.log\n",
    "sub/inner.inc": "MYVAR = from_inner\narguments = $(MYVAR)\n",
    "nested.inc": "include : common.inc\nrequest_cpus = 2\n",
    "cond.inc": "if defined FAST\n  request_cpus = 8\nelse\n  request_cpus = 1\nendif\n",
    "logs/.keep": "",
    "out/.keep": "",
    "run0/.keep": "", "run1/.keep": "", "run2/.keep": "", "run3/.keep": "",
    "job_0/.keep": "", "job_1/.keep": "", "job_2/.keep": "",
    "dir_a/.keep": "", "dir_b/.keep": "",
    "in/.keep": "",
    "Hello.class": "\xca\xfe\xba\xbe not really a class\n",
    "lib/util.jar": "PK not really a jar\n",
    "extra.jar": "PK not really a jar\n",
}

# --- The HTCondor manual's examples (submit description chapter) ---------
case("manual_01_simple", """
# Example 1: one copy of a program, no input or output
executable = a.out
log = simple.log
queue
""")
case("manual_02_io", """
executable = a.out
input  = in.txt
output = out.txt
error  = err.txt
log    = job.log
request_memory = 1 GB
queue
""")
case("manual_03_process", """
executable     = a.out
universe       = vanilla
input          = in.txt
output         = out.$(Process)
error          = err.$(Process)
log            = job.log
arguments      = $(Process)
queue 150
""")
case("manual_04_initialdir", """
executable = a.out
initialdir = run$(Process)
log = job.log
output = out
queue 3
""")
case("manual_05_requirements", """
executable   = a.out
requirements = Memory >= 64 && OpSys == "LINUX" && Arch == "X86_64"
rank         = Memory
request_memory = 64
queue
""")
case("manual_06_transfer", """
executable = a.out
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
transfer_input_files = a.txt, b.txt
transfer_output_files = result.dat
log = job.log
queue
""")
case("manual_07_new_args", """
executable = a.out
arguments = "3 simple arguments"
queue
""")
case("manual_08_new_args_quotes", """
executable = a.out
arguments = "one 'two with spaces' 3"
queue
""")
case("manual_09_old_args", """
executable = a.out
arguments = one two three
queue
""")
case("manual_10_environment", """
executable = a.out
environment = "one=1 two=""2"" three='spacey ''quoted'' value'"
queue
""")
case("manual_11_old_env", """
executable = a.out
environment = one=1;two=2;three=3
queue
""")
case("manual_12_getenv", """
executable = a.out
getenv = true
queue
""")
case("manual_13_priority", """
executable = a.out
priority = 10
nice_user = false
queue 2
""")
case("manual_14_periodic", """
executable = a.out
periodic_hold = (time() - JobCurrentStartDate) > 3600
periodic_release = NumJobStarts < 3
periodic_remove = JobStatus == 5 && (time() - EnteredCurrentStatus) > 86400
on_exit_remove = ExitCode == 0
on_exit_hold = ExitCode =!= 0
queue
""")
case("manual_15_custom_attrs", """
executable = a.out
+ProjectName = "Chemistry"
+IsTest = true
MY.Weight = 3
queue
""")
case("manual_16_accounting", """
executable = a.out
accounting_group = group_physics
accounting_group_user = alice
queue
""")
case("manual_17_notification", """
executable = a.out
notification = Error
notify_user = alice@example.org
queue
""")
case("manual_18_matching", """
executable = analyze
arguments = $(Item)
queue matching files *.dat
""")
case("manual_19_matching_dir", """
executable = analyze
arguments = -f $(filename)
queue filename matching data/*.dat
""")
case("manual_20_from_csv", """
executable = a.out
arguments = -n $(n) -name $(name)
output = out.$(n)
queue n, name from params.csv
""")
case("manual_21_from_inline", """
executable = a.out
arguments = $(a) $(b)
queue a, b from (
  1, x
  2, y
  3, z
)
""")
case("manual_22_in_list", """
executable = a.out
arguments = $(Item)
queue in (alpha, beta, gamma)
""")
case("manual_23_multiplicity", """
executable = a.out
arguments = $(x) step $(Step)
queue 3 x in (a b c)
""")
case("manual_24_args_from_file", """
executable = a.out
queue arguments from args.txt
""")
case("manual_25_input_from", """
executable = a.out
queue input from files.txt
""")
case("manual_26_batch_name", """
executable = a.out
batch_name = sweep-$(Cluster)
queue 2
""")
case("manual_27_retries", """
executable = a.out
max_retries = 5
queue
""")
case("manual_28_checkpoint", """
executable = a.out
checkpoint_exit_code = 85
transfer_checkpoint_files = state.dat
queue
""")
case("manual_29_gpus", """
executable = a.out
request_gpus = 1
request_cpus = 2
request_memory = 4G
queue
""")
# GPU commands beyond request_gpus: each bound alone, all together with
# the user's own requirements and require_gpus, and a count HTCondor
# takes but Starling refuses.
for name, lines in [
    ("require", "require_gpus = Capability >= 8.0"),
    ("min_capability", "gpus_minimum_capability = 8.0"),
    ("max_capability", "gpus_maximum_capability = 9.0"),
    ("min_memory", "gpus_minimum_memory = 4G"),
    ("min_runtime", "gpus_minimum_runtime = 12.1"),
    ("all_bounds", "require_gpus = ECCEnabled || DriverVersion > 10.75\n"
                   "gpus_minimum_capability = 7.5\ngpus_maximum_capability = 9.0\n"
                   "gpus_minimum_memory = 16000\ngpus_minimum_runtime = 12.2\n"
                   "requirements = Memory > 1024 || Cpus > 4"),
]:
    case(f"gpus_{name}", f"""
executable = a.out
request_gpus = 1
{lines}
queue
""")
case("gpus_negative", """
executable = a.out
request_gpus = -1
queue
""")
case("manual_30_requests_units", """
executable = a.out
request_memory = 512 MB
request_disk = 2 GB
request_cpus = 4
queue
""")
case("manual_31_hold", """
executable = a.out
hold = true
queue
""")
case("manual_32_description", """
executable = a.out
description = a test job
queue
""")
case("manual_33_kill_sig", """
executable = a.out
kill_sig = SIGINT
job_max_vacate_time = 60
queue
""")
case("manual_34_transfer_executable", """
executable = /bin/true
transfer_executable = false
queue
""")
case("manual_35_when_output", """
executable = a.out
should_transfer_files = IF_NEEDED
when_to_transfer_output = ON_EXIT_OR_EVICT
queue
""")

# --- Macro functions ------------------------------------------------------
case("macro_int", """
executable = a.out
arguments = $INT(Process,%03d)
queue 3
""")
case("macro_int_expr", """
N = 7
executable = a.out
arguments = $INT(N) $INT(N,%x)
queue
""")
case("macro_real", """
X = 3.14159
executable = a.out
arguments = $REAL(X,%.2f)
queue
""")
case("macro_fn", """
executable = a.out
arguments = $Fn(dir/file.tar.gz) $Fx(dir/file.tar.gz) $Fnx(dir/file.tar.gz)
queue
""")
case("macro_fp", """
F = /home/alice/data/run.dat
executable = a.out
arguments = $Fp(F) $Fd(F) $Fdb(F)
queue
""")
case("macro_fq", """
executable = a.out
arguments = $Fq(a.txt)
queue
""")
case("macro_item_fn", """
executable = a.out
output = $Fn(Item).out
arguments = $Fnx(Item)
queue matching files *.dat
""")
case("macro_substr", """
NAME = abcdefgh
executable = a.out
arguments = $SUBSTR(NAME,2,3) $SUBSTR(NAME,-2)
queue
""")
case("macro_choice", """
LIST = red, green, blue
executable = a.out
arguments = $CHOICE(Process, LIST)
queue 3
""")
case("macro_choice_inline", """
executable = a.out
arguments = $CHOICE(Process, one, two, three)
queue 3
""")
case("macro_random_choice_single", """
executable = a.out
arguments = $RANDOM_CHOICE(only)
queue
""")
case("macro_random_integer_fixed", """
executable = a.out
arguments = $RANDOM_INTEGER(4, 4)
queue
""")
case("macro_string", """
S = "quoted value"
executable = a.out
arguments = $STRING(S) [$STRING(S,%-14s)]
queue
""")
case("macro_eval", """
executable = a.out
arguments = $EVAL(2 * 3) $EVAL(strcat("a", "b")) $EVAL(1 < 2)
queue
""")
case("macro_basename_dirname", """
F = /data/run/file.tar.gz
executable = a.out
arguments = $BASENAME(F) $BASENAME(F, .tar.gz) $DIRNAME(F)
queue
""")
case("macro_env", """
executable = a.out
arguments = $ENV(STARLING_SUBMIT_TEST)
queue
""")
case("macro_env_default", """
executable = a.out
arguments = $ENV(STARLING_SUBMIT_UNSET:fallback)
queue
""")
case("macro_default", """
executable = a.out
arguments = $(UNSET:default value)
queue
""")
case("macro_undefined", """
executable = a.out
arguments = x$(NOT_DEFINED)y
queue
""")
case("macro_nested", """
A = $(B)-a
B = $(C)-b
C = c
executable = a.out
arguments = $(A)
queue
""")
case("macro_case", """
MyVar = value
executable = a.out
arguments = $(myvar) $(MYVAR)
queue
""")
case("macro_cluster", """
executable = a.out
output = out.$(Cluster).$(Process)
arguments = $(ClusterId) $(ProcId)
queue 2
""")
case("macro_dollardollar", """
executable = a.out
arguments = $$(Memory)
queue
""")
case("macro_submit_file", """
executable = a.out
arguments = $Fn(SUBMIT_FILE)
queue
""")
case("macro_int_only", """
START = 100
executable = a.out
arguments = $INT(START)
queue
""")
case("macro_redefine", """
executable = a.out
X = 1
arguments = $(X)
queue
X = 2
queue
""")
case("macro_self_append", """
A = one
A = $(A) two
executable = a.out
arguments = $(A)
queue
""")
case("macro_item_index", """
executable = a.out
arguments = $(ItemIndex) $(Row) $(Step) $(Item)
queue 2 in (p, q)
""")

# --- Conditionals and includes ---------------------------------------------
case("if_defined", """
FAST = 1
executable = a.out
if defined FAST
  request_cpus = 4
else
  request_cpus = 1
endif
queue
""")
case("if_not_defined", """
executable = a.out
if ! defined FAST
  arguments = slow
endif
queue
""")
case("if_elif", """
MODE = 2
executable = a.out
if $(MODE) == 1
  arguments = one
elif $(MODE) == 2
  arguments = two
else
  arguments = other
endif
queue
""")
case("if_version", """
executable = a.out
if version >= 8.0
  arguments = new
else
  arguments = old
endif
queue
""")
case("if_true", """
executable = a.out
if true
  request_memory = 100
endif
queue
""")
case("if_false", """
executable = a.out
if false
  request_memory = 100
endif
queue
""")
case("if_nested", """
A = 1
B = 0
executable = a.out
if $(A)
  if $(B)
    arguments = ab
  else
    arguments = a
  endif
endif
queue
""")
case("if_expression", """
N = 5
executable = a.out
if $(N) > 3
  arguments = big
else
  arguments = small
endif
queue
""")
case("include_simple", """
include : common.inc
queue
""")
case("include_nested", """
include : nested.inc
arguments = nested
queue
""")
case("include_subdir", """
executable = a.out
include : sub/inner.inc
queue
""")
case("include_cond", """
FAST = yes
executable = a.out
include : cond.inc
queue
""")
case("include_macro_path", """
INC = common
include : $(INC).inc
queue
""")
case("include_missing", """
executable = a.out
include : no_such_file.inc
queue
""")

# --- Queue forms -------------------------------------------------------------
case("queue_plain_count", """
executable = a.out
queue 5
""")
case("queue_zero", """
executable = a.out
queue 0
""")
case("queue_macro_count", """
N = 4
executable = a.out
queue $(N)
""")
case("queue_in_no_parens", """
executable = a.out
arguments = $(name)
queue name in A, B, C
""")
case("queue_in_multiline", """
executable = a.out
arguments = $(Item)
queue in (
  one
  two
  three
)
""")
case("queue_two_vars_file", """
executable = a.out
arguments = $(num) $(word)
queue num word from params.csv
""")
case("queue_from_inline_three", """
executable = a.out
arguments = $(a)/$(b)/$(c)
queue a,b,c from (
  1 2 3
  4 5 6
)
""")
case("queue_multiple", """
executable = a.out
arguments = first
queue 2
arguments = second
queue 3
""")
case("queue_matching_dirs", """
executable = a.out
initialdir = $(dir)
queue dir matching dirs dir_*
""")
case("queue_matching_plain", """
executable = a.out
arguments = $(Item)
queue matching x*.dat
""")
case("queue_count_in", """
executable = a.out
arguments = $(f) $(Process)
queue 2 f in (a.txt b.txt)
""")
case("queue_var_is_command", """
executable = a.out
queue arguments in (one, two)
""")
case("queue_initialdir_var", """
executable = a.out
output = out.txt
queue initialdir in (run0, run1, run2)
""")
case("queue_no_queue", """
executable = a.out
""")
case("queue_from_seq", """
executable = a.out
arguments = $(Item)
queue from seq 7 9 |
""")
case("queue_slice", """
executable = a.out
arguments = $(Item)
queue in [1:3] (a, b, c, d)
""")
case("queue_item_macros", """
executable = a.out
arguments = $Fn(Item)
queue in ($(SUBMIT_FILE), other.sub)
""")

# --- Commands Starling may not know ---------------------------------------------
for i, (key, value) in enumerate([
    ("request_gpus", "2"),
    ("transfer_output_remaps", '"out.txt = results/out.txt"'),
    ("allowed_execute_duration", "3600"),
    ("allowed_job_duration", "7200"),
    ("want_graceful_removal", "true"),
    ("concurrency_limits", "license_a"),
    ("nice_user", "true"),
    ("machine_count", "1"),
    ("use_oauth_services", "scitokens"),
    ("retry_request_memory", "2048"),
    ("retry_request_memory_increase", "RequestMemory * 2"),
    ("transfer_output", "true"),
    ("transfer_input", "true"),
    ("max_idle", "10"),
    ("max_materialize", "10"),
    ("stream_output", "true"),
    ("stream_error", "true"),
    ("output_directory", "out"),
    ("success_exit_code", "3"),
    ("cron_minute", "*/5"),
    ("JobBatchName", '"named"'),
    ("job_lease_duration", "1200"),
    ("coresize", "0"),
    ("image_size", "100000"),
    ("rank", "KFlops"),
    ("leave_in_queue", "false"),
    ("max_transfer_input_mb", "100"),
    ("preserve_relative_paths", "true"),
    ("want_remote_io", "false"),
    ("encrypt_input_files", "a.txt"),
    ("deferral_time", "1700000000"),
    ("job_machine_attrs", "Machine"),
    ("on_exit_hold_reason", '"failed"'),
    ("periodic_vacate", "false"),
    ("submit_event_notes", "note"),
    ("load_profile", "true"),
    ("run_as_owner", "false"),
    ("skip_filechecks", "true"),
    ("want_io_proxy", "true"),
    ("dont_encrypt_output_files", "out.txt"),
    ("request_memory", "1024, 2048, 4096"),
    ("should_transfer_files", "always"),
    ("getenv", "PATH, HOME"),
    ("arguements", "typo"),
    ("wantcorefile", "true"),
    ("type", "job"),
    ("when_to_transfer_files", "ON_EXIT"),
    ("docker_image", "ubuntu:22.04"),
    ("container_image", "docker://ubuntu:22.04"),
    ("grid_resource", "batch slurm"),
    ("checkpoint_exit_code", "85"),
    ("periodic_hold_reason", '"too long"'),
    ("request_disk", "1G"),
]):
    case(f"cmd_{i:02d}_{key.lower()}", f"""
executable = a.out
{key} = {value}
queue
""")

for uni, extra in [
    ("vanilla", ""), ("java", "executable = Hello.class\narguments = Hello\n"),
    ("docker", "docker_image = ubuntu:22.04\n"), ("container", "container_image = ubuntu.sif\n"),
    ("parallel", "machine_count = 2\n"), ("local", ""), ("scheduler", ""), ("grid", "grid_resource = batch slurm\n"),
    ("VANILLA", ""),
]:
    case(f"universe_{uni.lower()}_{uni.isupper()}", f"""
universe = {uni}
executable = a.out
{extra}queue
""")

# The universes the submit agent runs itself, shaped like HTCondor's own
# test and DAG node files: initialdir, standard streams, file transfer
# commands (which neither universe uses), requests, policy and kill_sig.
case("universe_local_sweep", """
universe   = local
initialdir = data
executable = a.out
arguments  = "-n $(Process) 'two words'"
environment = "STEP=$(Process) MODE=local"
input      = x1.dat
output     = out.$(Process)
error      = err.$(Process)
log        = local.log
request_memory = 2G
queue 3
""")
case("universe_scheduler_dag_node", """
universe     = scheduler
executable   = a.out
arguments    = $(nodename) -v
nodename     = A
output       = node-$(nodename).out
error        = node-$(nodename).err
log          = dag.log
notification = NEVER
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
transfer_input_files = a.txt, b.txt
queue
""")
case("universe_scheduler_policy", """
universe       = scheduler
executable     = /bin/sh
transfer_executable = false
arguments      = -c 'exit 3'
request_cpus   = 2
requirements   = Memory > 64
kill_sig       = SIGUSR1
max_retries    = 2
on_exit_hold   = ExitCode == 4
priority       = 5
queue
""")
case("universe_local_getenv_false", """
universe    = local
executable  = a.out
getenv      = false
env         = A=1;B=2
should_transfer_files = NO
queue 2
""")

# The java universe, shaped like HTCondor's own job_core_*_java tests:
# the class file as executable, the main class as the first argument,
# jar files and the JVM's own arguments (old and new syntax).
case("universe_java_hello", """
universe   = java
executable = Hello.class
arguments  = Hello world $(Process)
output     = hello.$(Process).out
error      = hello.$(Process).err
log        = hello.log
queue 2
""")
case("universe_java_jars_vm_args", """
universe     = java
executable   = Hello.class
jar_files    = lib/util.jar,extra.jar
java_vm_args = -Xmx256m -Dmode=batch
arguments    = "Hello 'two words' -v"
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
transfer_input_files = in.txt
request_memory = 512M
queue
""")
case("universe_java_vm_arguments_new", """
universe          = java
executable        = Hello.class
java_vm_arguments = "-Xss4m '-Dgreeting=hi there'"
arguments         = Hello
requirements      = Memory > 64
queue
""")
case("universe_java_no_transfer", """
universe   = java
executable = Hello.class
arguments  = Hello
should_transfer_files = NO
queue
""")
case("universe_java_no_class", """
universe   = java
executable = Hello.class
queue
""")

case("bad_syntax", """
executable = a.out
this line is nonsense
queue
""")
case("bad_requirements", """
executable = a.out
requirements = Memory >= (
queue
""")
case("bad_initialdir", """
executable = a.out
initialdir = does_not_exist
queue
""")
case("bad_transfer_no", """
executable = a.out
should_transfer_files = NO
transfer_input_files = a.txt
queue
""")
case("bad_no_executable", """
arguments = 1
queue
""")
case("bad_queue_count", """
executable = a.out
queue many
""")
case("bad_unterminated_args", """
executable = a.out
arguments = "unterminated
queue
""")

# --- DAG node files -----------------------------------------------------------
for i in range(6):
    case(f"dag_node_{i}", f"""
# node {i} of a DAG: DAGMan sets the macros by VARS lines
executable = a.out
arguments = --node {i} --in $(input_file:in.txt)
output = node{i}.out
error = node{i}.err
log = dag.log
request_cpus = {1 + i % 3}
request_memory = {256 * (i + 1)}
+DAGNodeName = "N{i}"
queue
""")

# --- Sweeps as users write them ----------------------------------------------
for i in range(10):
    n = 2 + i % 4
    case(f"sweep_{i}", f"""
# parameter sweep {i}
executable = a.out
seed = $(Process) * {i + 1}
arguments = --seed $(Process) --alpha $(alpha) --tag sweep{i}
output = out/sweep{i}_$(Process)_$(alpha).out
error = out/sweep{i}_$(Process)_$(alpha).err
log = logs/sweep{i}.log
request_memory = {128 * n} MB
queue {n} alpha in (0.1, 0.2)
""")

# --- Details real files run into (issues 22 and 26) --------------------------
case("real_default_disk_inputs", """
executable = a.out
input = in.txt
transfer_input_files = a.txt, data/, http://example.org/big.tgz
queue
""")
case("real_resource_clauses", """
executable = a.out
request_cpus = 1.0
request_memory = 1
request_disk = 0
queue
""")
case("real_cpus_in_requirements", """
executable = a.out
request_cpus = 2
requirements = Cpus >= 4 && TARGET.Disk > 10
queue
""")
case("real_custom_resource", """
executable = a.out
request_foobar = 3
request_licence = "matlab"
queue
""")
case("real_retry_policy", """
executable = a.out
success_exit_code = 3
retry_until = ExitCode == 7
on_exit_remove = Done ? true : false
queue
""")
case("real_env_old_syntax", """
executable = a.out
env = B=2;A=1
queue
""")
case("real_getenv_list", """
executable = a.out
getenv = starling_submit_*, !STARLING_SUBMIT_NONE
queue
""")
case("real_transfer_executable_relative", """
executable = ./bin/prog
transfer_executable = false
queue
""")
case("real_concurrency_limits", """
executable = a.out
concurrency_limits = Zed, DB:2
queue
""")
case("real_continued_lines", """
executable = a.out
arguments = a\\
  b \\
  c
queue
""")
case("real_blank_arguments", """
executable = a.out
arguments = $(nothing) $(none)
queue
""")
case("real_bare_double_quote", """
executable = a.out
arguments = -c "echo hi"
queue
""")
case("real_file_lists_quoted", """
executable = a.out
transfer_input_files = "a.txt, b.txt"
transfer_output_files = ""
queue
""")
case("real_env_unset", """
executable = a.out
arguments = $ENV(STARLING_SUBMIT_UNSET_VARIABLE)
queue
""")
case("real_booleans", """
executable = a.out
hold = TRUE && true
nice_user = 0
queue
""")
case("real_nice_user_yes", """
executable = a.out
nice_user = yes
queue
""")

# --- A job that goes over its memory runs again with more (HTCondor's own
# cmd_submit_regress_dry retry_mem* files, and their neighbours) ----------
for name, lines in [
    ("retry_mem1", "request_memory = 1GB\nretry_request_memory = 2GB"),
    ("retry_mem_max", "request_memory = 1GB\nretry_request_memory_max = 2GB"),
    ("retry_mem_incr", "request_memory = 1GB\nretry_request_memory_increase = 500 MB"),
    ("retry_mem_incr2", "request_memory = 1GB\nretry_request_memory_increase = RequestMemory*2"),
    ("retry_mem_incr_max", "request_memory = 1GB\nretry_request_memory_increase = 512MB\n"
     "retry_request_memory_max = 2GB"),
    ("retry_mem_incr_expr_max", "request_memory = 512\n"
     "retry_request_memory_increase = RequestMemory * 4\nretry_request_memory_max = 16 GB"),
    ("retry_mem2", "request_memory = 1GB\nretry_request_memory = 2GB, 8GB"),
    ("retry_mem3", "request_memory = 1GB, 2GB, 8GB"),
    ("retry_mem_both", "request_memory = 1GB\nretry_request_memory = 4GB\n"
     "retry_request_memory_increase = 1GB"),
    ("retry_mem_expr_request", "request_memory = MY.Base * 2\n+Base = 100\n"
     "retry_request_memory = 2GB"),
    ("retry_mem_eval", "request_memory = 1GB\n"
     "retry_request_memory = MAX({RequestMemory, MemoryUsage}) * 2"),
    ("retry_mem_not_increasing", "request_memory = 1GB\nretry_request_memory = 4GB, 2GB"),
    ("retry_mem_zero_increase", "request_memory = 1GB\nretry_request_memory_increase = 0"),
    ("retry_mem_bad_increase", "request_memory = 1GB\nretry_request_memory_increase = Cpus * 2"),
    ("retry_mem_garbage", "request_memory = 1GB\nretry_request_memory = lots (&"),
]:
    case(name, f"executable = a.out\narguments = 10s\n{lines}\nqueue\n")

# --- Limits on the size of the job's transfers --------------------------
for name, lines in [
    ("max_transfer_in_room", "max_transfer_input_mb = 10\nmax_transfer_output_mb = 100"),
    ("max_transfer_in_none", "max_transfer_input_mb = -1"),
    ("max_transfer_in_expr", "max_transfer_input_mb = RequestMemory / 64\n"
     "max_transfer_output_mb = 2 * 1024"),
    ("max_transfer_in_over", "max_transfer_input_mb = 0"),
    ("max_transfer_bad", "max_transfer_output_mb = lots of ("),
]:
    case(name, f"executable = a.out\n{lines}\nqueue\n")

# --- Seeded combinations -----------------------------------------------------------
rng = random.Random(22)
LINES = [
    "request_cpus = {n}", "request_memory = {m}", "request_memory = {m} MB",
    "request_disk = {d}", "request_disk = {d} KB", "priority = {p}",
    "arguments = {w} $(Process)", 'arguments = "{w} \'x y\' $(Process)"',
    "environment = A={w};B=$(Process)", 'environment = "A={w} B=$(Process)"',
    "output = {w}.$(Process).out", "error = {w}.$(Process).err", "log = {w}.log",
    "input = in.txt", "transfer_input_files = a.txt,b.txt",
    "transfer_output_files = {w}.dat", "should_transfer_files = YES",
    "when_to_transfer_output = ON_EXIT", "rank = Memory * {n}",
    "requirements = Memory > {m}", "requirements = (OpSys == \"LINUX\") && Cpus >= {n}",
    "+Project = \"{w}\"", "+Sequence = $(Process) + {n}", "MY.Tag = \"{w}\"",
    "batch_name = {w}", "periodic_remove = (time() - QDate) > {d}",
    "on_exit_remove = ExitCode == 0", "max_retries = {n}", "accounting_group = grp_{w}",
    "arguments = $INT(Process,%02d) {w}", "output = $Fn(in.txt).$(Process)",
    "notification = never", "getenv = false", "hold = false",
    "job_max_vacate_time = {n}0", "kill_sig = SIGTERM",
    "request_gpus = {g}", "concurrency_limits = lic_{w}", "nice_user = false",
]
WORDS = ["alpha", "beta", "run", "sim", "proj", "fit", "mc"]
QUEUES = ["queue", "queue {n}", "queue {n} w in (x, y)", "queue in (u, v, w)",
          "queue v from (\n  1\n  2\n)", "queue matching files *.dat"]
for i in range(50):
    picks = rng.sample(LINES, rng.randint(3, 9))
    vals = dict(n=rng.randint(1, 4), m=rng.choice([64, 128, 1000, 2048]),
                d=rng.choice([100, 1024, 5000000]), p=rng.randint(-5, 5),
                w=rng.choice(WORDS), g=rng.randint(1, 2))
    body = "\n".join(l.format(**vals) for l in picks)
    q = rng.choice(QUEUES).format(**vals)
    case(f"gen_{i:02d}", f"executable = a.out\n{body}\n{q}\n")


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for path, text in AUX.items():
        full = os.path.join(OUT, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
        if path in ("a.out", "analyze"):
            os.chmod(full, 0o755)
    for name, text in CASES.items():
        with open(os.path.join(OUT, name + ".sub"), "w") as f:
            f.write(text)
    print(f"{len(CASES)} submit files in {OUT}")


if __name__ == "__main__":
    main()
