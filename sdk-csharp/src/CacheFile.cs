using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace Flagstore
{
    /// <summary>The cache file: the last good payload, so that a restart while the service is down still has flags.</summary>
    public static class CacheFile
    {
        static int writes;
        static readonly int ProcessId = CurrentProcessId();

        /// <summary>The process id; a random number where a platform will not say (some Unity targets).</summary>
        static int CurrentProcessId()
        {
            try
            {
                using (var process = Process.GetCurrentProcess()) return process.Id;
            }
            catch (Exception)
            {
                return new Random().Next(1, int.MaxValue);
            }
        }

        [DllImport("libc", EntryPoint = "chmod", SetLastError = true)]
        static extern int Chmod(string path, int mode);

        /// <summary>
        /// On Unix the file is the owner's alone (0600, as the TypeScript SDK writes it): it holds server-only flags.
        /// Best effort: where libc cannot be called (Windows, a sandbox), the folder's permissions decide.
        /// </summary>
        static void OwnerOnly(string path)
        {
            if (Environment.OSVersion.Platform != PlatformID.Unix && Environment.OSVersion.Platform != PlatformID.MacOSX) return;
            try
            {
                Chmod(path, 0x180); // 0600
            }
            catch (Exception)
            {
                // DllNotFoundException, EntryPointNotFoundException: no libc here.
            }
        }

        /// <summary>The payload the file holds; null when there is none yet. A file that is not one throws.</summary>
        public static ConfigPayload Read(string path)
        {
            string text;
            try
            {
                text = File.ReadAllText(path, Encoding.UTF8);
            }
            catch (FileNotFoundException)
            {
                return null;
            }
            catch (DirectoryNotFoundException)
            {
                return null;
            }
            return ConfigPayload.Parse(text);
        }

        /// <summary>
        /// Replaces the file in one step: the payload goes to a temporary file beside it, is flushed to disk, and is
        /// renamed over the old one, so a crash or another process reading at the same moment sees the old payload or
        /// the new one, never half of one. The temporary name carries the process id and a counter, so servers on one
        /// host sharing a cache file never write into each other's temporary files.
        /// </summary>
        public static void Write(string path, ConfigPayload payload)
        {
            var temporary = path + "." + ProcessId + "." + Interlocked.Increment(ref writes) + ".tmp";
            try
            {
                var bytes = new UTF8Encoding(false).GetBytes(payload.ToJson());
                using (var file = new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None))
                {
                    OwnerOnly(temporary);
                    file.Write(bytes, 0, bytes.Length);
                    file.Flush(true);
                }
                if (File.Exists(path)) File.Replace(temporary, path, null);
                else
                {
                    try
                    {
                        File.Move(temporary, path);
                    }
                    catch (IOException)
                    {
                        // Another process created it meanwhile: replace theirs.
                        File.Replace(temporary, path, null);
                    }
                }
            }
            catch
            {
                try { File.Delete(temporary); } catch (Exception) { }
                throw;
            }
        }
    }
}
