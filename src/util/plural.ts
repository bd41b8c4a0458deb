// "1 VF", "2 VFs": a count and its noun, in the number the count asks for.
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
