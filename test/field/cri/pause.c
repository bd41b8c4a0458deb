// The sandbox ("pause") process of the CRI tests' pod sandboxes: holds the pod's namespaces and waits for the
// runtime's SIGTERM. Built with `gcc -static` and packed FROM scratch (pause-image.ts): nothing is pulled.
#include <signal.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

int main(void) {
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  for (;;) pause();
}
