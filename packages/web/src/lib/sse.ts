import { useEffect, useRef } from 'react';

/**
 * One EventSource per mounted screen, closed on unmount; the browser reconnects by itself and
 * sends Last-Event-ID, so a log tail resumes where it stopped instead of starting over.
 */
export function useEventStream(url: string | null, handlers: Record<string, (data: any) => void>) {
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    if (!url) return;
    const es = new EventSource(url, { withCredentials: true });
    const names = Object.keys(ref.current);
    const listeners = names.map((name) => {
      const fn = (e: MessageEvent) => ref.current[name]?.(JSON.parse(e.data));
      es.addEventListener(name, fn);
      return [name, fn] as const;
    });
    // The server ends a finished run's stream; do not reconnect to it.
    es.addEventListener('end', () => es.close());
    return () => {
      for (const [name, fn] of listeners) es.removeEventListener(name, fn);
      es.close();
    };
  }, [url]);
}
