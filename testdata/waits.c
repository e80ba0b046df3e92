/*
 * waits: the program the off-CPU captures record. Each thread waits in
 * its own way, under its own name, in a function of its own:
 *   sleeper   sleeps 2 ms at a time           (sleep_a_while: nanosleep)
 *   holder    holds a mutex 3 ms at a time    (hold_the_lock)
 *   waiter    blocks on that mutex            (wait_for_lock: pthread_mutex_lock)
 *   writer    writes a byte every 2 ms        (write_a_byte)
 *   reader    blocks reading the pipe         (read_a_byte: read)
 *   busy-a/b  spin on CPU 0 together, so each is preempted by the other
 *             while still runnable            (spin)
 * It runs for about 0.3 s.
 *
 * Built with frame pointers and without inlining so every function keeps
 * its own symbol and call sites:
 *   gcc -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -o testdata/waits testdata/waits.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 100

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fds[2];
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void spin(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		sink++;
}

void sleep_a_while(long ns)
{
	struct timespec t = { 0, ns };
	nanosleep(&t, NULL);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	for (int i = 0; i < ROUNDS; i++)
		sleep_a_while(2000000);
	return NULL;
}

void hold_the_lock(void)
{
	pthread_mutex_lock(&lock);
	spin(3000000);
	pthread_mutex_unlock(&lock);
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder");
	for (int i = 0; i < ROUNDS / 2; i++) {
		hold_the_lock();
		sleep_a_while(1000000);
	}
	return NULL;
}

void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	for (int i = 0; i < ROUNDS / 2; i++) {
		spin(100000);
		wait_for_lock();
	}
	return NULL;
}

void write_a_byte(void)
{
	char c = 'x';
	sleep_a_while(2000000);
	if (write(pipe_fds[1], &c, 1) != 1)
		sink++;
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	for (int i = 0; i < ROUNDS; i++)
		write_a_byte();
	return NULL;
}

void read_a_byte(void)
{
	char c;
	if (read(pipe_fds[0], &c, 1) != 1)
		sink++;
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	for (int i = 0; i < ROUNDS; i++)
		read_a_byte();
	return NULL;
}

static void *busy(void *arg)
{
	cpu_set_t cpu0;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	pthread_setaffinity_np(pthread_self(), sizeof(cpu0), &cpu0);
	pthread_setname_np(pthread_self(), (const char *)arg);
	spin(250000000);
	return NULL;
}

int main(void)
{
	void *(*bodies[])(void *) = { sleeper, holder, waiter, writer, reader, busy, busy };
	const char *args[] = { 0, 0, 0, 0, 0, "busy-a", "busy-b" };
	enum { N = sizeof(bodies) / sizeof(bodies[0]) };
	pthread_t threads[N];

	if (pipe(pipe_fds) != 0)
		return 1;
	for (int i = 0; i < N; i++)
		pthread_create(&threads[i], NULL, bodies[i], (void *)args[i]);
	for (int i = 0; i < N; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
