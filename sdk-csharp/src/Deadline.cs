using System;
using System.Threading;
using System.Threading.Tasks;

namespace Flagstore
{
    static class Deadline
    {
        /// <summary>
        /// The work's result, or a Timeout error after timeoutMs (a service that accepted the connection and never
        /// answers), or a Closed error once the controller is cancelled (the client stopped): even if the transport
        /// ignores its token. The timer is a real one: a watchdog, not a wait the client chooses.
        /// </summary>
        public static async Task<T> Within<T>(Func<CancellationToken, Task<T>> start, CancellationTokenSource controller, int timeoutMs, string what)
        {
            // true: the time ran out; false: the client stopped. The timer cancels the transport's token (running its
            // callbacks) before the caller hears of the timeout: whoever sees Timeout finds the request abandoned.
            var deadline = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            var expired = 0;
            Task<T> work;
            var timer = new Timer(state =>
            {
                Interlocked.Exchange(ref expired, 1);
                TryCancel(controller);
                deadline.TrySetResult(true);
            }, null, Timeout.Infinite, Timeout.Infinite);
            Timers.Hold(timer);
            timer.Change(timeoutMs, Timeout.Infinite);
            try
            {
                using (controller.Token.Register(() =>
                {
                    // The timer's own cancellation: it settles the deadline itself, once every callback has run.
                    if (Volatile.Read(ref expired) == 0) deadline.TrySetResult(false);
                }))
                {
                    try
                    {
                        work = start(controller.Token);
                    }
                    catch (Exception error)
                    {
                        work = FromException<T>(error);
                    }
                    var done = await Task.WhenAny(work, deadline.Task).ConfigureAwait(false);
                    if (done == work) return await work.ConfigureAwait(false);
                }
            }
            finally
            {
                Timers.Release(timer);
            }
            // The work may still fail later: observe it, so it is no unobserved task exception.
            Observe(work);
            if (deadline.Task.Result) throw new FlagstoreException(FlagstoreErrorKind.Timeout, what + " took longer than " + timeoutMs + " ms");
            throw new FlagstoreException(FlagstoreErrorKind.Closed, what + " was abandoned: the client stopped");
        }

        /// <summary>A task nobody waits on any more: its fault, if it ever has one, is taken as seen.</summary>
        public static void Observe(Task task)
        {
            task.ContinueWith(done => done.Exception, TaskContinuationOptions.OnlyOnFaulted);
        }

        public static void TryCancel(CancellationTokenSource controller)
        {
            try
            {
                controller.Cancel();
            }
            catch (ObjectDisposedException)
            {
            }
            catch (AggregateException)
            {
                // A transport's cancellation callback threw: the request is abandoned all the same.
            }
        }

        static Task<T> FromException<T>(Exception error)
        {
            var source = new TaskCompletionSource<T>();
            source.SetException(error);
            return source.Task;
        }
    }
}
