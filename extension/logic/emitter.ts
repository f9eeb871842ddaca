/** A minimal event emitter (vscode-free), shaped like vscode.EventEmitter. */
export interface Disposable {
  dispose(): void;
}

export class Emitter<T> {
  private listeners = new Set<(v: T) => void>();

  /** Subscribes; dispose the result to unsubscribe. */
  readonly event = (fn: (v: T) => void): Disposable => {
    this.listeners.add(fn);
    return { dispose: () => this.listeners.delete(fn) };
  };

  fire(v: T): void {
    for (const fn of [...this.listeners]) {
      try {
        fn(v);
      } catch (err) {
        // one listener's bug must not stop the others
        console.error("[causeway] listener failed:", err);
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
