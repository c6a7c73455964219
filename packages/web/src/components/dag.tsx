import { Background, Controls, type Edge, type Node, Position, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useEffect, useMemo, useState } from 'react';
import type { LayoutRequest, LayoutResponse } from '../lib/dagre.worker';
import type { Spec } from '../lib/types';

const W = 170;
const H = 48;

// Laid-out positions per spec shape, so going back to a graph does not lay it out again.
const cache = new Map<string, Record<string, { x: number; y: number }>>();
let worker: Worker | null = null;
let nextId = 0;
function layout(req: Omit<LayoutRequest, 'id'>): Promise<LayoutResponse['positions']> {
  worker ??= new Worker(new URL('../lib/dagre.worker.ts', import.meta.url), { type: 'module' });
  const id = ++nextId;
  return new Promise((resolve) => {
    const w = worker!;
    const onMessage = (e: MessageEvent<LayoutResponse>) => {
      if (e.data.id !== id) return;
      w.removeEventListener('message', onMessage);
      resolve(e.data.positions);
    };
    w.addEventListener('message', onMessage);
    w.postMessage({ ...req, id });
  });
}

const fills: Record<string, string> = {
  pending: '#94a3b8',
  running: '#3b82f6',
  succeeded: '#10b981',
  failed: '#ef4444',
  canceled: '#71717a',
  skipped: '#a1a1aa',
  changed: '#f59e0b',
  added: '#10b981',
};

/** The steps and edges of a spec; `states` colours each step (run state, or diff change). */
export function Dag(props: {
  spec: Spec;
  states?: Record<string, string>;
  label?: string;
  onSelect?: (step: string) => void;
}) {
  const shape = useMemo(
    () => JSON.stringify({ s: props.spec.steps.map((s) => s.slug), e: props.spec.edges ?? [] }),
    [props.spec],
  );
  const [positions, setPositions] = useState(cache.get(shape) ?? null);
  useEffect(() => {
    const hit = cache.get(shape);
    if (hit) return setPositions(hit);
    let live = true;
    void layout({
      nodes: props.spec.steps.map((s) => ({ id: s.slug, width: W, height: H })),
      edges: props.spec.edges ?? [],
    }).then((p) => {
      cache.set(shape, p);
      if (live) setPositions(p);
    });
    return () => {
      live = false;
    };
  }, [shape, props.spec]);

  const nodes: Node[] = props.spec.steps.map((s) => {
    const state = props.states?.[s.slug];
    const color = state ? fills[state] : '#64748b';
    return {
      id: s.slug,
      position: positions?.[s.slug] ?? { x: 0, y: 0 },
      sourcePosition: Position.Right,
      targetPosition: Position.Left,
      data: { label: `${s.slug} · ${s.kind}${state ? ` · ${state}` : ''}` },
      ariaLabel: `Step ${s.slug}, ${s.kind}${state ? `, ${state}` : ''}`,
      style: {
        width: W,
        borderColor: color,
        borderWidth: 2,
        borderLeftWidth: 8,
        fontSize: 12,
        background: 'var(--dag-node-bg)',
        color: 'var(--dag-node-fg)',
      },
      className: 'dag-node',
    };
  });
  const edges: Edge[] = (props.spec.edges ?? []).map((e) => ({
    id: `${e.from}->${e.to}`,
    source: e.from,
    target: e.to,
  }));
  return (
    <figure
      className="h-72 rounded-md border border-slate-200 dark:border-slate-800 [--dag-node-bg:#fff] [--dag-node-fg:#0f172a] dark:[--dag-node-bg:#0f172a] dark:[--dag-node-fg:#e2e8f0]"
      aria-label={props.label ?? 'Pipeline graph'}
    >
      {positions && (
        <ReactFlow
          nodes={nodes}
          edges={edges}
          fitView
          // On a narrow screen the graph is panned rather than shrunk: a step stays at least
          // 24 px high, the least target size (docs/app.md, "Narrow screens").
          fitViewOptions={{ maxZoom: 1.1, minZoom: 0.8 }}
          nodesDraggable={false}
          nodesConnectable={false}
          colorMode="system"
          onNodeClick={(_, n) => props.onSelect?.(n.id)}
          proOptions={{ hideAttribution: true }}
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      )}
    </figure>
  );
}
