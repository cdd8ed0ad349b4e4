//! The L2 persisting window: a case's access policy window on the stream and the
//! context's persisting set-aside, set before its launches, and cleared with their
//! persisting lines before another case or a transfer runs. WebGPU has no such thing.

use cudarc::driver::DevicePtr;
use cudarc::driver::sys;

use super::kernel::{Argument, Prepared};
use super::{Cuda, driver_error};
use crate::error::{Error, Result};
use crate::suite::CudaLaunch;

impl Cuda {
    /// Puts the stream's L2 access policy window and the context's persisting set-aside
    /// where the case wants them. When the case differs from the one that set the last
    /// window, that window is cleared, its persisting lines are reset and the set-aside
    /// goes back to 0 first: no case inherits another's lines.
    pub(super) fn persist(&self, prepared: &Prepared) -> Result<()> {
        let mut active = self.persisting.lock().unwrap_or_else(|e| e.into_inner());
        let wanted = matches!(prepared.launch, CudaLaunch::PersistingWindow { .. })
            .then_some(prepared.launch);
        if active.is_none() && wanted.is_none() {
            return Ok(());
        }
        // The raw context calls below act on the thread's current context.
        self.ctx
            .bind_to_thread()
            .map_err(driver_error("making the context current"))?;
        if *active != wanted {
            self.leave_persisting(&mut active)?;
        }
        // The window is set again at every batch, even for the same launch: it holds the
        // hot buffer's address, and another build of the same case has its own buffer.
        let Some(CudaLaunch::PersistingWindow {
            buffer,
            bytes,
            hit_percent,
            set_aside,
        }) = wanted
        else {
            return Ok(());
        };
        let Some(Argument::Buffer(slice)) = prepared.storage.get(buffer) else {
            return Err(Error::Case(format!(
                "{}: argument {buffer} is no buffer to put a window on",
                prepared.label
            )));
        };
        if bytes > 4 * slice.len() as u64 {
            return Err(Error::Case(format!(
                "{}: a window of {bytes} bytes over a buffer of {}",
                prepared.label,
                4 * slice.len()
            )));
        }
        if let Some(why) = self.beyond_persisting_limits(prepared.launch) {
            return Err(Error::Case(why));
        }
        // SAFETY: a plain call on the current context.
        unsafe {
            sys::cuCtxSetLimit(
                sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
                crate::host_len(set_aside),
            )
        }
        .result()
        .map_err(driver_error("setting the persisting L2 set-aside"))?;
        let (pointer, _) = slice.device_ptr(&self.stream);
        self.set_window(Some(sys::CUaccessPolicyWindow {
            base_ptr: pointer as *mut std::ffi::c_void,
            num_bytes: crate::host_len(bytes),
            hitRatio: hit_percent as f32 / 100.0,
            hitProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
            missProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
        }))?;
        *active = wanted;
        Ok(())
    }

    /// Clears the stream's window, resets its persisting lines and sets the set-aside
    /// back to 0, if a case left them (`active`); binds the context first, since the
    /// raw context calls act on the thread's current one.
    pub(super) fn leave_persisting(&self, active: &mut Option<CudaLaunch>) -> Result<()> {
        if active.is_none() {
            return Ok(());
        }
        self.ctx
            .bind_to_thread()
            .map_err(driver_error("making the context current"))?;
        self.set_window(None)?;
        // SAFETY: plain calls on the current context, after the stream's work.
        unsafe {
            sys::cuCtxResetPersistingL2Cache()
                .result()
                .map_err(driver_error("resetting the persisting L2 lines"))?;
            sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0)
                .result()
                .map_err(driver_error("clearing the persisting L2 set-aside"))?;
        }
        *active = None;
        Ok(())
    }

    /// Why this device cannot run a persisting window as `launch` asks: a set-aside or
    /// a window larger than it allows (an H100 lets 32 768 000 bytes persist).
    pub(super) fn beyond_persisting_limits(&self, launch: CudaLaunch) -> Option<String> {
        let CudaLaunch::PersistingWindow {
            bytes, set_aside, ..
        } = launch
        else {
            return None;
        };
        let limit = |attribute| self.device_attribute(attribute).ok();
        let most =
            limit(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?;
        let widest =
            limit(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?;
        (set_aside > most || bytes > widest).then(|| {
            format!(
                "a persisting set-aside of {set_aside} bytes and a window of {bytes}: this device allows {most} and {widest}"
            )
        })
    }

    /// Sets the stream's access policy window, or clears it (`None`: a window of 0
    /// bytes).
    fn set_window(&self, window: Option<sys::CUaccessPolicyWindow>) -> Result<()> {
        let window = window.unwrap_or(sys::CUaccessPolicyWindow {
            base_ptr: std::ptr::null_mut(),
            num_bytes: 0,
            hitRatio: 0.0,
            hitProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
            missProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
        });
        let value = sys::CUstreamAttrValue {
            accessPolicyWindow: window,
        };
        // SAFETY: the stream lives as long as the backend; the value outlives the call.
        unsafe {
            sys::cuStreamSetAttribute(
                self.stream.cu_stream(),
                sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                &value,
            )
        }
        .result()
        .map_err(driver_error("setting the stream's L2 access policy window"))
    }

    /// A device attribute of this backend's GPU, in bytes.
    fn device_attribute(&self, attribute: sys::CUdevice_attribute) -> Result<u64> {
        let value = self
            .ctx
            .attribute(attribute)
            .map_err(driver_error("reading a device attribute"))?;
        Ok(u64::try_from(value).unwrap_or(0))
    }
}
