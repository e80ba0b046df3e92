/*
 * td-demo: the program the generated top-down captures (crates/testgen)
 * pretend to have recorded. Each function has a distinct name and a
 * distinct kind of work, so per-function top-down mixes read naturally:
 * parse_input is front-end heavy (a long, branchy decode loop),
 * hash_table_probe is memory bound (random loads over a large table),
 * sort_records and branchy_search mispredict (data-dependent branches)
 * and recurse (deep stacks), checksum retires well (a tight ALU loop).
 *
 * Built with frame pointers and without inlining so every function keeps
 * its own symbol and call sites:
 *   gcc -O1 -g -fno-omit-frame-pointer -fno-inline -o testdata/td-demo testdata/td-demo.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NRECORDS 4096
#define TABLE_BITS 20

struct record {
	uint32_t key;
	uint32_t value;
};

static struct record records[NRECORDS];
static uint32_t *table;

uint32_t checksum(const struct record *r, int n)
{
	uint32_t sum = 0;
	for (int i = 0; i < n; i++)
		sum = (sum << 5) + sum + r[i].key + r[i].value;
	return sum;
}

uint32_t parse_input(uint32_t seed)
{
	for (int i = 0; i < NRECORDS; i++) {
		seed = seed * 1103515245u + 12345u;
		switch (seed >> 29) {
		case 0: records[i].key = seed ^ 0x5a5a5a5a; break;
		case 1: records[i].key = seed + i; break;
		case 2: records[i].key = seed >> 3; break;
		case 3: records[i].key = ~seed; break;
		default: records[i].key = seed * 3; break;
		}
		records[i].value = i;
	}
	return checksum(records, NRECORDS);
}

uint32_t hash_table_probe(uint32_t rounds)
{
	uint32_t mask = (1u << TABLE_BITS) - 1, h = 0, hits = 0;
	for (uint32_t i = 0; i < rounds; i++) {
		h = (h ^ records[i % NRECORDS].key) * 2654435761u;
		hits += table[h & mask] & 1;
		table[(h >> 7) & mask] += i;
	}
	return hits;
}

void sort_records(struct record *r, int lo, int hi)
{
	if (lo >= hi)
		return;
	uint32_t pivot = r[(lo + hi) / 2].key;
	int i = lo, j = hi;
	while (i <= j) {
		while (r[i].key < pivot)
			i++;
		while (r[j].key > pivot)
			j--;
		if (i <= j) {
			struct record t = r[i];
			r[i] = r[j];
			r[j] = t;
			i++;
			j--;
		}
	}
	sort_records(r, lo, j);
	sort_records(r, i, hi);
}

int branchy_search(const struct record *r, int lo, int hi, uint32_t key)
{
	if (lo > hi)
		return -1;
	int mid = lo + (hi - lo) / 2;
	if (r[mid].key == key)
		return mid;
	if (r[mid].key < key)
		return branchy_search(r, mid + 1, hi, key);
	return branchy_search(r, lo, mid - 1, key);
}

uint32_t run(int iterations)
{
	uint32_t acc = 0;
	for (int it = 0; it < iterations; it++) {
		acc += parse_input(acc + it);
		acc += hash_table_probe(1u << 16);
		sort_records(records, 0, NRECORDS - 1);
		for (int k = 0; k < NRECORDS; k += 7)
			acc += branchy_search(records, 0, NRECORDS - 1, records[k].key ^ (acc & 1));
		acc += checksum(records, NRECORDS);
	}
	return acc;
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 20;
	table = calloc(1u << TABLE_BITS, sizeof(*table));
	if (!table)
		return 1;
	printf("%u\n", run(iterations));
	free(table);
	return 0;
}
