//! hipRTC, loaded at run time (hip-sys binds no hipRTC): compiles the shared
//! copy kernel ([`crate::bench::gpu::COPY_KERNEL`]) into a code object for
//! one GPU architecture. ROCm ≥ 5.3 ships it as `libhiprtc.so.N`; ROCm ≤ 5.2
//! (Debian 12's `libamdhip64-5`) exports it from `libamdhip64.so` itself.
//! Every status is a plain `int` (0 = `HIPRTC_SUCCESS`); a failed compile
//! returns the compiler's log.

use std::ffi::{c_char, c_int, CString};

use libloading::Library;

type Program = *mut std::ffi::c_void;
type Create = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type Compile = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int;
type Size = unsafe extern "C" fn(Program, *mut usize) -> c_int;
type Get = unsafe extern "C" fn(Program, *mut c_char) -> c_int;
type Destroy = unsafe extern "C" fn(*mut Program) -> c_int;

/// Where hipRTC may live, newest first.
const LIBRARIES: [&str; 6] =
    ["libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so", "libamdhip64.so.5"];

pub struct HipRtc {
    lib: Library,
    from: &'static str,
}

impl HipRtc {
    /// The first library that exports `hiprtcCompileProgram`, or why none does.
    pub fn open() -> Result<HipRtc, String> {
        for name in LIBRARIES {
            // SAFETY: loading a ROCm library runs only its initialisers.
            if let Ok(lib) = unsafe { Library::new(name) } {
                if unsafe { lib.get::<Compile>(b"hiprtcCompileProgram\0") }.is_ok() {
                    return Ok(HipRtc { lib, from: name });
                }
            }
        }
        Err(format!(
            "no hipRTC to compile the copy kernel (looked for {}); install ROCm's hiprtc or put /opt/rocm/lib on LD_LIBRARY_PATH",
            LIBRARIES.join(", ")
        ))
    }

    /// The hipRTC function `name` (NUL-terminated), or which library lacks it.
    ///
    /// SAFETY: `T` must be the C signature of `name`.
    unsafe fn sym<T>(&self, name: &'static [u8]) -> Result<libloading::Symbol<'_, T>, String> {
        self.lib
            .get::<T>(name)
            .map_err(|_| format!("{} is missing from {}", String::from_utf8_lossy(&name[..name.len() - 1]), self.from))
    }

    /// Compile `source` for `arch` (`gfx942`; `None`: the current device's).
    pub fn compile(&self, source: &str, arch: Option<&str>) -> Result<Vec<u8>, String> {
        // SAFETY: the signatures are hipRTC's C API (hiprtc.h), unchanged
        // from ROCm 5 to 7; every pointer handed over outlives the call.
        unsafe {
            let create = self.sym::<Create>(b"hiprtcCreateProgram\0")?;
            let compile = self.sym::<Compile>(b"hiprtcCompileProgram\0")?;
            let size = self.sym::<Size>(b"hiprtcGetCodeSize\0")?;
            let code = self.sym::<Get>(b"hiprtcGetCode\0")?;
            let log_size = self.sym::<Size>(b"hiprtcGetProgramLogSize\0")?;
            let log = self.sym::<Get>(b"hiprtcGetProgramLog\0")?;
            let destroy = self.sym::<Destroy>(b"hiprtcDestroyProgram\0")?;
            let src = CString::new(source).map_err(|e| e.to_string())?;
            let mut prog: Program = std::ptr::null_mut();
            let st =
                create(&mut prog, src.as_ptr(), c"benchbook_copy.hip".as_ptr(), 0, std::ptr::null(), std::ptr::null());
            if st != 0 {
                return Err(format!("hiprtcCreateProgram failed: status {st}"));
            }
            let opts: Vec<CString> = arch
                .iter()
                .map(|a| CString::new(format!("--gpu-architecture={a}")))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
            let st = compile(prog, ptrs.len() as c_int, ptrs.as_ptr());
            let result = if st != 0 {
                let mut n = 0usize;
                let mut text = String::new();
                if log_size(prog, &mut n) == 0 && n > 0 {
                    let mut buf = vec![0u8; n];
                    if log(prog, buf.as_mut_ptr() as *mut c_char) == 0 {
                        text = String::from_utf8_lossy(&buf).trim_end_matches('\0').trim().to_string();
                    }
                }
                Err(format!("hipRTC could not compile the copy kernel (status {st}): {text}"))
            } else {
                let mut n = 0usize;
                if size(prog, &mut n) != 0 || n == 0 {
                    Err("hipRTC compiled the copy kernel but returned no code object".to_string())
                } else {
                    let mut buf = vec![0u8; n];
                    match code(prog, buf.as_mut_ptr() as *mut c_char) {
                        0 => Ok(buf),
                        st => Err(format!("hiprtcGetCode failed: status {st}")),
                    }
                }
            };
            destroy(&mut prog);
            result
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hipRTC needs no GPU to compile for a named architecture: the copy
    /// kernel must compile into an ELF code object, and a broken source
    /// fail with the compiler's words.
    #[test]
    fn the_copy_kernel_compiles_for_an_amd_architecture() {
        // The hip feature links libamdhip64, which carries hipRTC up to ROCm
        // 5.2 and ships beside libhiprtc from 5.3 on.
        let rtc = HipRtc::open().unwrap();
        let code = rtc.compile(crate::bench::gpu::COPY_KERNEL, Some("gfx90a")).unwrap();
        assert_eq!(&code[..4], b"\x7fELF", "a code object is an ELF file");
        let bad = rtc.compile("extern \"C\" __global__ void k() { undeclared(); }", Some("gfx90a")).unwrap_err();
        assert!(bad.contains("undeclared"), "{bad}");
    }
}
