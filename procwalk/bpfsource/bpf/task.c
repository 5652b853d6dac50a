// SPDX-License-Identifier: GPL-2.0
/* task.c: a BPF task iterator (iter/task, Linux 5.8+) writing one record per
 * task to the seq_file that procwalk reads: a full record for each thread
 * group leader (a process), a short one for every other thread, whose CPU
 * times and faults procwalk adds to its process as /proc/<pid>/stat does.
 * Pids are those of the reader's pid namespace: the iterator walks only the
 * tasks visible there, and task->pid is the host's number. */
#include "task.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

#define REC_PROCESS 1
#define REC_THREAD 2

/* A task's /proc/<pid>/io counters (struct task_io_accounting). */
struct io_counters {
	__u64 rchar, wchar, syscr, syscw;
	__u64 read_bytes, write_bytes, cancelled_write_bytes;
};

/* A process: what /proc/<pid>/stat, statm and status say of it, raw. Times
 * in ns, memory in pages; procwalk converts them exactly as the kernel
 * does for /proc. Every field is naturally aligned: no padding. */
struct process_rec {
	__u32 kind; /* REC_PROCESS */
	__u32 pid;
	__u32 ppid;
	__u32 pgrp;
	__u32 sid;
	__u32 tty_nr;
	__u32 uid;
	__u32 euid;
	__u32 state;	  /* task->__state */
	__u32 exit_state;
	__u32 flags;	  /* PF_*: PF_KTHREAD marks a kernel thread */
	__u32 threads;	  /* signal->nr_threads */
	__u32 rss_partial; /* 1: an RSS counter lacks its per-CPU parts */
	__u32 io;	  /* 1: the io counters are set (CONFIG_TASK_IO_ACCOUNTING) */
	__u64 start_boottime; /* ns since boot, suspend included */
	__u64 utime, stime, rtime; /* leader's own plus dead threads' (signal) */
	__u64 prev_utime, prev_stime; /* signal->prev_cputime: last reported */
	__u64 cutime, cstime; /* reaped children */
	__u64 min_flt, maj_flt; /* leader's own plus dead threads' */
	__u64 nvcsw, nivcsw;
	__u64 rss_file, rss_anon, rss_swap, rss_shmem; /* pages */
	__u64 total_vm, data_vm, stack_vm; /* pages */
	__u64 start_code, end_code, start_stack; /* addresses */
	__u64 cgroup_id; /* cgroup v2 (kernfs node) id */
	struct io_counters io_counters; /* leader's own plus dead threads' */
	char comm[16];
};

/* Another thread of a process: what it adds to its process's totals. */
struct thread_rec {
	__u32 kind; /* REC_THREAD */
	__u32 tgid;
	__u64 utime, stime, rtime;
	__u64 min_flt, maj_flt;
	struct io_counters io_counters;
};

/* Unused but for bpf2go -type: they make the Go types. */
struct process_rec _process_rec = {};
struct thread_rec _thread_rec = {};

/* nr_in_ns is pid_nr_ns(): pid's number in ns at level, 0 when pid is not
 * visible there (a parent outside a container's namespace). */
static __always_inline __u32 nr_in_ns(struct pid *pid, struct pid_namespace *ns, __u32 level)
{
	struct upid up;

	if (!pid || BPF_CORE_READ(pid, level) < level)
		return 0;
	if (bpf_probe_read_kernel(&up, sizeof(up),
				  (void *)pid + bpf_core_field_offset(struct pid, numbers) +
					  level * bpf_core_type_size(struct upid)))
		return 0;
	return up.ns == ns ? up.nr : 0;
}

/* signal_pid is *task_pid_ptr(t, type) for a type other than PIDTYPE_PID. */
static __always_inline struct pid *signal_pid(struct task_struct *t, int type)
{
	struct signal_struct *sig = BPF_CORE_READ(t, signal);
	struct pid *p = 0;

	if (sig)
		bpf_probe_read_kernel(&p, sizeof(p), &sig->pids[type]);
	return p;
}

/* rss is get_mm_counter(mm, member) before 6.2 (an atomic_long_t), or on
 * later kernels the counter's shared value alone, clamped at 0 as
 * percpu_counter_read_positive() does. The
 * element's address is computed from the kernel's sizes (CO-RE), not from
 * the cut-down types of task.h. */
static __always_inline __u64 rss(struct mm_struct *mm, int member)
{
	__s64 v = 0;
	void *at;

	if (bpf_core_type_exists(struct mm_rss_stat___pre62))
		at = (void *)mm + bpf_core_field_offset(struct mm_struct___pre62, rss_stat) +
		     member * bpf_core_type_size(atomic_long_t);
	else
		at = (void *)mm + bpf_core_field_offset(struct mm_struct, rss_stat) +
		     member * bpf_core_type_size(struct percpu_counter) +
		     bpf_core_field_offset(struct percpu_counter, count);
	bpf_probe_read_kernel(&v, sizeof(v), at);
	return v < 0 ? 0 : v;
}

/* nr_cpus is the number of possible CPUs, set by procwalk at load time. */
const volatile __u32 nr_cpus = 1;

#define MAX_CPUS 1024

/* cpu_off finds the kernel's per-CPU offsets (__per_cpu_offset[], not a
 * symbol BPF can name without CONFIG_KALLSYMS_ALL): a per-CPU map's element
 * on a CPU is at its __percpu address plus that CPU's offset. */
struct {
	__uint(type, 6); /* BPF_MAP_TYPE_PERCPU_ARRAY */
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_off SEC(".maps");

/* addr is a pointer's value as a plain number, which the verifier lets a
 * program compute with (it refuses arithmetic on a map pointer). */
static __always_inline __u64 addr(void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/* rss_sum is get_mm_counter_sum(mm, member), what statm reports: the shared
 * count plus each possible CPU's part, clamped at 0 as
 * percpu_counter_sum_positive() does. Where the per-CPU parts cannot be
 * read (a NULL counters pointer, no per-CPU offsets, a failed read) it
 * sets *partial: the value is the shared count alone, off by up to the
 * counter's batch on each CPU. */
static __always_inline __u64 rss_sum(struct mm_struct *mm, int member, __u64 base, __u32 *partial)
{
	void *pc = (void *)mm + bpf_core_field_offset(struct mm_struct, rss_stat) +
		   member * bpf_core_type_size(struct percpu_counter);
	__s64 v = 0;
	__u64 counters = 0;
	__u32 cpu, key = 0;

	if (bpf_core_type_exists(struct mm_rss_stat___pre62))
		return rss(mm, member); /* no per-CPU parts */
	bpf_probe_read_kernel(&v, sizeof(v), pc + bpf_core_field_offset(struct percpu_counter, count));
	bpf_probe_read_kernel(&counters, sizeof(counters),
			      pc + bpf_core_field_offset(struct percpu_counter, counters));
	if (!counters || !base) {
		*partial = 1;
		return rss(mm, member);
	}
	for (cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++) {
		void *at = bpf_map_lookup_percpu_elem(&cpu_off, &key, cpu);
		__s32 part = 0;

		if (!at)
			continue;
		if (bpf_probe_read_kernel(&part, sizeof(part), (void *)(counters + (addr(at) - base))))
			*partial = 1;
		v += part;
	}
	return v < 0 ? 0 : v;
}

/* add_io adds the counters of the task_io_accounting at a to c, as
 * task_io_accounting_add does; 0 when the kernel keeps none. */
static __always_inline int add_io(struct io_counters *c, struct task_io_accounting *a)
{
	if (!bpf_core_field_exists(a->read_bytes) || !bpf_core_field_exists(a->rchar))
		return 0;
	c->rchar += BPF_CORE_READ(a, rchar);
	c->wchar += BPF_CORE_READ(a, wchar);
	c->syscr += BPF_CORE_READ(a, syscr);
	c->syscw += BPF_CORE_READ(a, syscw);
	c->read_bytes += BPF_CORE_READ(a, read_bytes);
	c->write_bytes += BPF_CORE_READ(a, write_bytes);
	c->cancelled_write_bytes += BPF_CORE_READ(a, cancelled_write_bytes);
	return 1;
}

SEC("iter/task")
int procwalk_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct task_struct *me, *leader;
	struct pid_namespace *ns;
	struct pid *mypid;
	__u32 level;

	if (!task)
		return 0;

	/* The reader's pid namespace (task_active_pid_ns(current)): the
	 * iterator runs in the read(2) of the process reading it. */
	me = (struct task_struct *)bpf_get_current_task();
	mypid = BPF_CORE_READ(me, thread_pid);
	level = BPF_CORE_READ(mypid, level);
	ns = 0;
	bpf_probe_read_kernel(&ns, sizeof(ns),
			      (void *)mypid + bpf_core_field_offset(struct pid, numbers) +
				      level * bpf_core_type_size(struct upid) +
				      bpf_core_field_offset(struct upid, ns));

	leader = BPF_CORE_READ(task, group_leader);
	if (leader != task) {
		struct thread_rec t = {.kind = REC_THREAD};

		t.tgid = nr_in_ns(signal_pid(task, PIDTYPE_TGID), ns, level);
		t.utime = BPF_CORE_READ(task, utime);
		t.stime = BPF_CORE_READ(task, stime);
		t.rtime = BPF_CORE_READ(task, se.sum_exec_runtime);
		t.min_flt = BPF_CORE_READ(task, min_flt);
		t.maj_flt = BPF_CORE_READ(task, maj_flt);
		add_io(&t.io_counters, &task->ioac);
		bpf_seq_write(seq, &t, sizeof(t));
		return 0;
	}

	struct process_rec r = {.kind = REC_PROCESS};
	struct pid *thread_pid = BPF_CORE_READ(task, thread_pid);

	r.pid = nr_in_ns(thread_pid, ns, level);
	if (thread_pid) /* pid_alive(): no parent once it is being reaped */
		r.ppid = nr_in_ns(signal_pid(BPF_CORE_READ(task, real_parent), PIDTYPE_TGID), ns, level);
	r.pgrp = nr_in_ns(signal_pid(task, PIDTYPE_PGID), ns, level);
	r.sid = nr_in_ns(signal_pid(task, PIDTYPE_SID), ns, level);

	struct tty_struct *tty = BPF_CORE_READ(task, signal, tty);
	if (tty) {
		/* new_encode_dev(tty_devnum(tty)) */
		__u32 major = BPF_CORE_READ(tty, driver, major);
		__u32 minor = BPF_CORE_READ(tty, driver, minor_start) + BPF_CORE_READ(tty, index);
		r.tty_nr = (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
	}

	r.uid = BPF_CORE_READ(task, real_cred, uid.val);
	r.euid = BPF_CORE_READ(task, real_cred, euid.val);
	if (bpf_core_field_exists(task->__state))
		r.state = BPF_CORE_READ(task, __state);
	else
		r.state = BPF_CORE_READ((struct task_struct___pre514 *)task, state);
	r.exit_state = BPF_CORE_READ(task, exit_state);
	r.flags = BPF_CORE_READ(task, flags);
	r.threads = BPF_CORE_READ(task, signal, nr_threads);
	r.start_boottime = BPF_CORE_READ(task, start_boottime);

	r.utime = BPF_CORE_READ(task, utime) + BPF_CORE_READ(task, signal, utime);
	r.stime = BPF_CORE_READ(task, stime) + BPF_CORE_READ(task, signal, stime);
	r.rtime = BPF_CORE_READ(task, se.sum_exec_runtime) + BPF_CORE_READ(task, signal, sum_sched_runtime);
	r.prev_utime = BPF_CORE_READ(task, signal, prev_cputime.utime);
	r.prev_stime = BPF_CORE_READ(task, signal, prev_cputime.stime);
	r.cutime = BPF_CORE_READ(task, signal, cutime);
	r.cstime = BPF_CORE_READ(task, signal, cstime);
	r.min_flt = BPF_CORE_READ(task, min_flt) + BPF_CORE_READ(task, signal, min_flt);
	r.maj_flt = BPF_CORE_READ(task, maj_flt) + BPF_CORE_READ(task, signal, maj_flt);
	r.nvcsw = BPF_CORE_READ(task, nvcsw);
	r.nivcsw = BPF_CORE_READ(task, nivcsw);

	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	if (mm) {
		__u64 base = 0;

		bpf_probe_read_kernel(&base, sizeof(base),
				      (void *)(addr(&cpu_off) + bpf_core_field_offset(struct bpf_array, pptrs)));
		r.rss_file = rss_sum(mm, 0, base, &r.rss_partial); /* MM_FILEPAGES */
		r.rss_anon = rss_sum(mm, 1, base, &r.rss_partial); /* MM_ANONPAGES */
		r.rss_swap = rss_sum(mm, 2, base, &r.rss_partial); /* MM_SWAPENTS */
		r.rss_shmem = rss_sum(mm, 3, base, &r.rss_partial); /* MM_SHMEMPAGES */
		r.total_vm = BPF_CORE_READ(mm, total_vm);
		r.data_vm = BPF_CORE_READ(mm, data_vm);
		r.stack_vm = BPF_CORE_READ(mm, stack_vm);
		r.start_code = BPF_CORE_READ(mm, start_code);
		r.end_code = BPF_CORE_READ(mm, end_code);
		r.start_stack = BPF_CORE_READ(mm, start_stack);
	}
	r.cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	/* /proc/<pid>/io of the process: the leader's, the dead threads'
	 * (signal), and each other thread's (its thread_rec). */
	if (add_io(&r.io_counters, &task->ioac)) {
		struct signal_struct *sig = BPF_CORE_READ(task, signal);

		add_io(&r.io_counters, &sig->ioac);
		r.io = 1;
	}
	BPF_CORE_READ_INTO(&r.comm, task, comm);

	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}
