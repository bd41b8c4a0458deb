// The integration tier needs root and network namespaces; fail loudly instead of skipping.
export default function setup(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('the sriovctl test suite runs as root (it creates network namespaces); run: sudo npm test');
  }
}
