/* Writes RECORDS records of 4 KiB into FILE through a shared map and syncs each one alone,
 * msync of its own 4 KiB of the map (never the map's first address but for the first): a
 * sync per record that only the map holding the address, not the address mmap returned,
 * ties to FILE. Usage: msync_records FILE RECORDS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RECORD 4096

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE RECORDS\n", argv[0]);
		return 2;
	}
	long records = atol(argv[2]);
	size_t size = (size_t)records * RECORD;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, size) != 0) {
		perror(argv[1]);
		return 1;
	}
	char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (long k = 0; k < records; k++) {
		char *record = base + k * RECORD;
		memset(record, 'a' + k % 26, RECORD);
		if (msync(record, RECORD, MS_SYNC) != 0) {
			perror("msync");
			return 1;
		}
	}
	munmap(base, size);
	close(fd);
	return 0;
}
