/* task.h: the kernel types task.c reads, cut down to the fields it uses.
 * Every struct is marked preserve_access_index, so clang records each
 * access as a CO-RE relocation and the loader rewrites offsets against the
 * running kernel's BTF (/sys/kernel/btf/vmlinux): no vmlinux.h is needed,
 * and a field that moved between kernel versions is still found. Types with
 * a "___suffix" are flavors: the loader matches them to the type without
 * the suffix, for kernels whose layout differs. */
#ifndef PROCWALK_TASK_H
#define PROCWALK_TASK_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;
typedef __u32 __wsum;

#define PRESERVE __attribute__((preserve_access_index))

enum pid_type { PIDTYPE_PID, PIDTYPE_TGID, PIDTYPE_PGID, PIDTYPE_SID, PIDTYPE_MAX };

struct pid_namespace;

struct upid {
	int nr;
	struct pid_namespace *ns;
} PRESERVE;

struct pid {
	unsigned int level;
	struct upid numbers[1];
} PRESERVE;

struct kernfs_node {
	__u64 id;
} PRESERVE;

struct cgroup {
	struct kernfs_node *kn;
} PRESERVE;

struct css_set {
	struct cgroup *dfl_cgrp;
} PRESERVE;

typedef struct { int val; } kuid_t;

struct cred {
	kuid_t uid;
	kuid_t euid;
} PRESERVE;

struct tty_driver {
	int major;
	int minor_start;
} PRESERVE;

struct tty_struct {
	struct tty_driver *driver;
	int index;
} PRESERVE;

struct prev_cputime {
	__u64 utime;
	__u64 stime;
} PRESERVE;

/* include/linux/task_io_accounting.h: the counters /proc/<pid>/io shows
 * (CONFIG_TASK_XACCT and CONFIG_TASK_IO_ACCOUNTING). */
struct task_io_accounting {
	__u64 rchar, wchar, syscr, syscw;
	__u64 read_bytes, write_bytes, cancelled_write_bytes;
} PRESERVE;

struct signal_struct {
	int nr_threads;
	struct pid *pids[PIDTYPE_MAX];
	struct tty_struct *tty;
	__u64 utime, stime, cutime, cstime;
	struct prev_cputime prev_cputime;
	unsigned long min_flt, maj_flt;
	unsigned long long sum_sched_runtime;
	struct task_io_accounting ioac; /* dead threads' */
} PRESERVE;

/* Linux 6.2 and later keep each RSS counter in a percpu_counter. */
struct percpu_counter {
	__s64 count;
	__s32 *counters; /* __percpu */
} PRESERVE;

/* A per-CPU array map: pptrs[0] is its element's __percpu address. */
struct bpf_array {
	union {
		char value[0];
		void *pptrs[0];
	};
} PRESERVE;

struct mm_struct {
	struct percpu_counter rss_stat[4];
	unsigned long total_vm, data_vm, stack_vm, start_code, end_code, start_stack;
} PRESERVE;

/* Before 6.2: an array of atomic_long_t in struct mm_rss_stat. */
typedef struct { long counter; } atomic_long_t;

struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} PRESERVE;

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} PRESERVE;

struct sched_entity {
	__u64 sum_exec_runtime;
} PRESERVE;

struct task_struct {
	unsigned int __state;
	unsigned int flags;
	int exit_state;
	int pid;
	int tgid;
	struct task_struct *real_parent;
	struct task_struct *group_leader;
	struct pid *thread_pid;
	struct mm_struct *mm;
	struct sched_entity se;
	__u64 utime, stime;
	unsigned long nvcsw, nivcsw;
	__u64 start_boottime;
	unsigned long min_flt, maj_flt;
	const struct cred *real_cred;
	char comm[16];
	struct signal_struct *signal;
	struct css_set *cgroups;
	struct task_io_accounting ioac;
} PRESERVE;

/* Before 5.14 the state field was called state, and was a long. */
struct task_struct___pre514 {
	long state;
} PRESERVE;

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
} PRESERVE;

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} PRESERVE;

#endif
