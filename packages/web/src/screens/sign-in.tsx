import { zodResolver } from '@hookform/resolvers/zod';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { z } from 'zod';
import { Button, ErrorNote, Field, Input } from '../components/ui';
import { signIn } from '../lib/session';

const schema = z.object({
  email: z.string().email('Enter an email address'),
  password: z.string().min(1, 'Enter your password'),
});

export function SignIn() {
  const { next } = useSearch({ from: '/sign-in' });
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const form = useForm<z.infer<typeof schema>>({
    resolver: zodResolver(schema),
    defaultValues: { email: '', password: '' },
  });
  const onSubmit = form.handleSubmit(async (v) => {
    setError(null);
    try {
      const session = await signIn(v.email, v.password);
      qc.setQueryData(['session'], session);
      // Only a path on this host: never follow ?next= elsewhere.
      const target = next?.startsWith('/') && !next.startsWith('//') ? next : '/';
      await navigate({ to: target });
    } catch (e) {
      setError(e);
    }
  });
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-xl border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-800 dark:bg-slate-900">
        <div className="mb-5 flex items-center gap-2">
          <span
            aria-hidden
            className="inline-block h-7 w-7 rounded bg-gradient-to-br from-blue-500 to-cyan-400"
          />
          <h1 className="text-xl font-semibold">Sign in to Sluice</h1>
        </div>
        <form onSubmit={onSubmit} className="space-y-4" noValidate>
          <Field label="Email" error={form.formState.errors.email?.message}>
            {({ id, describedBy, invalid }) => (
              <Input
                id={id}
                type="email"
                autoComplete="username"
                aria-describedby={describedBy}
                aria-invalid={invalid}
                {...form.register('email')}
              />
            )}
          </Field>
          <Field label="Password" error={form.formState.errors.password?.message}>
            {({ id, describedBy, invalid }) => (
              <Input
                id={id}
                type="password"
                autoComplete="current-password"
                aria-describedby={describedBy}
                aria-invalid={invalid}
                {...form.register('password')}
              />
            )}
          </Field>
          <ErrorNote error={error} />
          <Button
            type="submit"
            variant="primary"
            className="w-full justify-center"
            disabled={form.formState.isSubmitting}
          >
            {form.formState.isSubmitting ? 'Signing in…' : 'Sign in'}
          </Button>
        </form>
        <p className="mt-4 text-xs text-slate-600 dark:text-slate-400">
          No password yet? An operator sets one with <code>sluice users set-password</code>.
        </p>
      </div>
    </main>
  );
}
