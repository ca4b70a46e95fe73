/* A program that saves a file the ways people do, for the durability findings' tests:
 *   save DIR MODE
 * MODE: replace-nosync   write config.tmp, rename it over config, no sync at all
 *       replace-nodirsync  write, fsync, rename, no sync of DIR
 *       replace-correct  write, fsync, rename, fsync DIR
 *       create-nodirsync  make DIR/new, write, fsync, no sync of DIR
 *       create-correct   make DIR/new, write, fsync, fsync DIR
 *       create-sync      make DIR/new, write, fsync, then sync() everything
 *       rewrite          truncate DIR/config in place, write, fsync
 *       small-writes     5000 one-byte writes to DIR/log (for the stacks' file:line) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char text[] = "key = value\n";

static void sync_dir(const char *dir)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	fsync(d);
	close(d);
}

static void replace(const char *dir, int sync_file, int sync_folder)
{
	char tmp[4096], dst[4096];
	snprintf(tmp, sizeof tmp, "%s/config.tmp", dir);
	snprintf(dst, sizeof dst, "%s/config", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(fd, text, strlen(text));
	if (sync_file)
		fsync(fd);
	close(fd);
	rename(tmp, dst);
	if (sync_folder)
		sync_dir(dir);
}

static void create(const char *dir, int sync_folder, int sync_all)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/new", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	write(fd, text, strlen(text));
	fsync(fd);
	close(fd);
	if (sync_folder)
		sync_dir(dir);
	if (sync_all)
		sync();
}

static void rewrite(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/config", dir);
	int fd = open(path, O_WRONLY | O_TRUNC);
	write(fd, text, strlen(text));
	fsync(fd);
	close(fd);
}

static void small_writes(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/log", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 5000; i++)
		write(fd, "x", 1); /* the offending call */
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *dir = argv[1], *mode = argv[2];
	if (!strcmp(mode, "replace-nosync"))
		replace(dir, 0, 0);
	else if (!strcmp(mode, "replace-nodirsync"))
		replace(dir, 1, 0);
	else if (!strcmp(mode, "replace-correct"))
		replace(dir, 1, 1);
	else if (!strcmp(mode, "create-nodirsync"))
		create(dir, 0, 0);
	else if (!strcmp(mode, "create-correct"))
		create(dir, 1, 0);
	else if (!strcmp(mode, "create-sync"))
		create(dir, 0, 1);
	else if (!strcmp(mode, "rewrite"))
		rewrite(dir);
	else if (!strcmp(mode, "small-writes"))
		small_writes(dir);
	else
		return 2;
	return 0;
}
