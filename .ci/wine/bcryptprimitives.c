/*
 * bcryptprimitives.dll for the Wine prefix of the Windows tests, and for
 * nothing else: it is never shipped. Windows 10 has this DLL, and Rust's
 * standard library takes its random numbers from its ProcessPrng (HashMap
 * seeds, for one), so every Rust DLL imports it; Wine 8 has no such DLL,
 * and Windows refuses to load a DLL whose imports it cannot find. This one
 * gives ProcessPrng what Windows documents for it (fill the buffer with
 * random bytes, always succeed) from Wine's BCryptGenRandom, the system
 * random source.
 *
 * .ci/platform-tools builds it with MinGW-w64 into .tools/wine.
 */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
    if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += n;
    len -= n;
  }
  return TRUE;
}
