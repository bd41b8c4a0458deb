// oneshot: the static launcher install-cni puts in a CNI bin dir, so the plugin runs on a node without glibc
// (k3s's busybox image). It carries no C library a node must have: it finds the payload install-cni wrote
// (the packaged executable and a private glibc) and execs the executable under that glibc's own loader
// (`ld.so --library-path <lib> --argv0 sriovctl-cni`, glibc >= 2.33), so the executable is the CNI plugin
// (src/sea/main.ts dispatches on argv[0]) with every library taken from the payload, none from the node.
//
// The payload (src/package/payload-layout.ts names it): <binDir>/sriovctl.d, a symlink install-cni swaps atomically to
// an immutable <binDir>/sriovctl.d-<hash>/ holding `sriovctl`, `oneshot` and lib/ (the loader and libraries).
// This file runs as <binDir>/sriovctl-cni (a copy) or as <payload>/oneshot: its payload is its own directory
// when that is a payload directory, else <its directory>/sriovctl.d. The path is resolved once (realpath), so
// the loader, the libraries and the executable all come from one payload even while an upgrade swaps the link.
// It holds a shared flock on that payload dir through its exec, for the life of the process it becomes (the fd is
// not close-on-exec): install-cni removes an old payload only under an exclusive flock it takes without waiting
// (src/install/leftovers.ts), so never one a plugin or a daemon runs from. A payload found gone, replaced, or
// locked for removal is resolved again from the link (bounded: ~10 s).
// The executable starts with every NODE_* variable of the caller removed: Node reads them at start-up, before the
// plugin's first line, and a single-executable application honours them as node does (NODE_OPTIONS=--require runs
// code in this root process; NODE_EXTRA_CA_CERTS makes every start parse a CA bundle it never uses, ~80 ms here).
// CNI VERSION, and a run by hand (no CNI_COMMAND: --version, --help), it answers itself once its payload is held —
// a static answer that Node would take 40 ms to start for (../cni_version.h, made from the TypeScript's).
// A failure is a CNI error on stdout (code 110, README) and the same line on stderr; nothing else is printed.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cni_version.h"

#if defined(__x86_64__)
#define LOADER "ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define LOADER "ld-linux-aarch64.so.1"
#else
#error "sriovctl ships a private glibc for amd64 and arm64 only"
#endif

#define PAYLOAD_DIR "sriovctl.d"
#define EXECUTABLE "sriovctl"
#define LIB_DIR "lib"
#define PLUGIN_NAME "sriovctl-cni"
/** src/cni/errors.ts CNI_ERR.CANNOT_START */
#define CANNOT_START 110
/** Attempts at holding a payload an installer is removing, 2 ms apart: ~10 s, an installer removes one in < 1 s. */
#define HOLD_ATTEMPTS 5000
/** What every variable Node reads at start-up begins with. */
#define NODE_PREFIX "NODE_"

extern char **environ;

static void put_json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void fail(const char *what, int err) {
  printf("{\"cniVersion\":\"1.0.0\",\"code\":%d,\"msg\":\"sriovctl-cni cannot start\",\"details\":", CANNOT_START);
  char details[PATH_MAX + 128];
  snprintf(details, sizeof details, "%s: %s", what, strerror(err));
  put_json_string(details);
  printf("}\n");
  fflush(stdout);
  fprintf(stderr, "sriovctl-cni: cannot start: %s\n", details);
  exit(1);
}

/** Whether `name` is a payload directory's name: sriovctl.d or sriovctl.d-<hash>. */
static int is_payload_name(const char *name) {
  size_t n = strlen(PAYLOAD_DIR);
  return strncmp(name, PAYLOAD_DIR, n) == 0 && (name[n] == '\0' || name[n] == '-');
}

/**
 * Where the payload is: `first`, this launcher's own directory when it is a payload's (run as <payload>/oneshot),
 * else <its directory>/sriovctl.d; `link`, <bin dir>/sriovctl.d, where to look when `first` is gone.
 */
static void payload_candidates(char *first, char *link) {
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len < 0) fail("/proc/self/exe", errno);
  self[len] = '\0';
  char *slash = strrchr(self, '/');
  if (!slash) fail(self, EINVAL);
  *slash = '\0';
  slash = strrchr(self, '/');
  const char *dir_name = slash ? slash + 1 : self;
  int own = is_payload_name(dir_name);
  int n = own ? snprintf(first, PATH_MAX, "%s", self) : snprintf(first, PATH_MAX, "%s/" PAYLOAD_DIR, self);
  if (n < 0 || n >= PATH_MAX) fail(self, ENAMETOOLONG);
  if (own && slash) *slash = '\0';  // self is now the payload's bin dir
  n = own ? snprintf(link, PATH_MAX, "%s/" PAYLOAD_DIR, self) : snprintf(link, PATH_MAX, "%s", first);
  if (n < 0 || n >= PATH_MAX) fail(self, ENAMETOOLONG);
}

/** Whether the directory at `path` is the one open on `fd`. */
static int is_same_dir(int fd, const char *path) {
  struct stat held, now;
  return fstat(fd, &held) == 0 && lstat(path, &now) == 0 && held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

/**
 * The payload's real path, into `out` (PATH_MAX), held: a shared flock on it, on an fd that stays open through
 * exec. `first` and `link` as payload_candidates() makes them.
 */
static void hold_payload(const char *first, const char *link, char *out) {
  const char *candidate = first;
  const struct timespec pause = {0, 2 * 1000 * 1000};
  for (int attempt = 0; attempt < HOLD_ATTEMPTS; attempt++) {
    if (!realpath(candidate, out)) {
      // our own payload dir went while we started: the link names the current one
      if (errno == ENOENT && strcmp(candidate, link) != 0) {
        candidate = link;
        continue;
      }
      fail(candidate, errno);
    }
    int fd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd >= 0) {
      if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
        if (is_same_dir(fd, out)) return;  // held: no installer removes it while we (and what we exec) live
      } else if (errno != EWOULDBLOCK && errno != EINTR) {
        fail(out, errno);
      }
      close(fd);
    } else if (errno != ENOENT) {
      fail(out, errno);
    }
    // being removed, or gone since realpath: an installer moved the link on; look again
    candidate = link;
    nanosleep(&pause, NULL);
  }
  fail(out, EBUSY);
}

/** This process's environment without the NODE_* variables: the executable's. */
static char **plugin_environment(void) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 1, sizeof *env);
  if (!env) fail("memory", ENOMEM);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (strncmp(environ[i], NODE_PREFIX, strlen(NODE_PREFIX)) != 0) env[kept++] = environ[i];
  }
  env[kept] = NULL;
  return env;
}

static void write_all(int fd, const char *text) {
  size_t left = strlen(text);
  while (left > 0) {
    ssize_t w = write(fd, text, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // nowhere to write: nothing better to do
    text += w;
    left -= (size_t)w;
  }
}

/** The answers that need no Node (as src/cni/main.ts gives them): VERSION, and a run without CNI_COMMAND. */
static void answer_if_static(void) {
  const char *command = getenv("CNI_COMMAND");
  if (command && strcmp(command, "VERSION") == 0) {
    write_all(1, SRIOVCTL_CNI_VERSION_REPLY);
    exit(0);
  }
  if (!command || !*command) {
    write_all(2, SRIOVCTL_CNI_ABOUT);
    exit(0);
  }
}

int main(int argc, char **argv) {
  char first[PATH_MAX], link[PATH_MAX], payload[PATH_MAX], loader[PATH_MAX], lib[PATH_MAX], executable[PATH_MAX];
  payload_candidates(first, link);
  hold_payload(first, link, payload);
  if (snprintf(loader, sizeof loader, "%s/" LIB_DIR "/" LOADER, payload) >= (int)sizeof loader ||
      snprintf(lib, sizeof lib, "%s/" LIB_DIR, payload) >= (int)sizeof lib ||
      snprintf(executable, sizeof executable, "%s/" EXECUTABLE, payload) >= (int)sizeof executable) {
    fail(payload, ENAMETOOLONG);
  }
  if (access(executable, X_OK) != 0) fail(executable, errno);
  answer_if_static();

  // loader, 4 options, the executable, our arguments after argv[0], NULL
  char **args = calloc((size_t)argc + 6, sizeof *args);
  if (!args) fail("memory", ENOMEM);
  size_t i = 0;
  args[i++] = loader;
  args[i++] = "--library-path";
  args[i++] = lib;
  args[i++] = "--argv0";
  args[i++] = PLUGIN_NAME;
  args[i++] = executable;
  for (int a = 1; a < argc; a++) args[i++] = argv[a];
  args[i] = NULL;
  execve(loader, args, plugin_environment());
  fail(loader, errno);
  return 1;
}
