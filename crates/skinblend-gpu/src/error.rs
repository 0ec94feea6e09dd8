//! The one error type of the GPU crate, and the error scopes that turn wgpu's validation,
//! out-of-memory and internal errors during an operation into it.

use skinblend::SkinError;
use thiserror::Error;

/// Everything that can go wrong on the GPU path, with the place and the value.
///
/// No public function of this crate panics on data or on a missing or failing GPU: each case
/// is one of these.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No GPU adapter (Vulkan driver) was found. Install a Vulkan driver (on Debian:
    /// `mesa-vulkan-drivers` gives the lavapipe software rasterizer) or run on a machine with a GPU.
    #[error("no GPU adapter found ({reason}); install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers")]
    NoAdapter {
        /// What wgpu reported.
        reason: String,
    },

    /// The adapter refused to create a device.
    #[error("adapter {adapter} could not create a device: {reason}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// What wgpu reported.
        reason: String,
    },

    /// The adapter lacks something the kernels need.
    #[error("adapter {adapter} is unsuitable: {what} is {found}, the kernels need {needed}")]
    UnsuitableAdapter {
        /// The adapter's name.
        adapter: String,
        /// Which limit.
        what: &'static str,
        /// The adapter's value.
        found: u64,
        /// The value needed.
        needed: u64,
    },

    /// The device was lost (driver reset, device destroyed): create a new [`crate::GpuSkinner`].
    #[error("GPU device lost during {operation}: {reason}")]
    DeviceLost {
        /// What was being done when the loss was seen.
        operation: &'static str,
        /// The reason wgpu gave.
        reason: String,
    },

    /// wgpu reported an error (validation, out of memory, internal) during an operation.
    #[error("GPU error during {operation}: {message}")]
    Wgpu {
        /// What was being done.
        operation: &'static str,
        /// wgpu's message.
        message: String,
    },

    /// A buffer the mesh needs is larger than the device allows in one buffer.
    #[error("{buffer} buffer needs {bytes} bytes, above the device's max_buffer_size of {limit}")]
    BufferTooLarge {
        /// Which buffer: `"positions"`, `"normals"`, `"tangents"`, `"joints"`, `"weights"`,
        /// `"rotation centers"`, `"blend values"`, `"output"`, `"palette"`.
        buffer: &'static str,
        /// Bytes needed.
        bytes: u64,
        /// The device's limit.
        limit: u64,
    },

    /// One vertex's data does not fit in one storage binding of the device.
    #[error("one vertex needs {bytes_per_vertex} bytes of {buffer}, above the device's max_storage_buffer_binding_size of {limit}")]
    VertexTooLarge {
        /// Which buffer.
        buffer: &'static str,
        /// Bytes per vertex in that buffer.
        bytes_per_vertex: u64,
        /// The device's limit.
        limit: u64,
    },

    /// The palette was prepared for a method the GPU kernels do not implement (one added to
    /// the core after this version of the crate: every method of `Method::ALL` runs here).
    #[error("method {method} is not supported on the GPU by this version of skinblend-gpu")]
    UnsupportedMethod {
        /// The method's name.
        method: String,
    },

    /// Reading a buffer back to the CPU failed.
    #[error("reading the {buffer} buffer back failed: {message}")]
    ReadBack {
        /// Which buffer.
        buffer: &'static str,
        /// What failed.
        message: String,
    },

    /// No frame was skinned yet on this mesh, so there is nothing to read back.
    #[error("nothing to read back: skin a frame first")]
    NothingSkinned,

    /// The data is invalid in the way the CPU path reports (lengths, palette size, ...).
    #[error(transparent)]
    Skin(#[from] SkinError),
}

/// Validation, out-of-memory and internal error scopes around one operation.
#[cfg(feature = "compute")]
pub(crate) struct ErrorScopes {
    guards: Vec<wgpu::ErrorScopeGuard>,
}

#[cfg(feature = "compute")]
impl Drop for ErrorScopes {
    /// On an early return the scopes must still be popped innermost first: wgpu panics on any
    /// other order.
    fn drop(&mut self) {
        while let Some(guard) = self.guards.pop() {
            drop(guard);
        }
    }
}

#[cfg(feature = "compute")]
impl ErrorScopes {
    pub(crate) fn push(device: &wgpu::Device) -> Self {
        Self {
            guards: vec![
                device.push_error_scope(wgpu::ErrorFilter::Validation),
                device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
                device.push_error_scope(wgpu::ErrorFilter::Internal),
            ],
        }
    }

    /// Pops the scopes (innermost first) and returns the first error any caught.
    pub(crate) fn pop(mut self, operation: &'static str) -> Result<(), GpuError> {
        let mut first = None;
        while let Some(guard) = self.guards.pop() {
            if let Some(error) = pollster::block_on(guard.pop()) {
                first.get_or_insert(error);
            }
        }
        match first {
            None => Ok(()),
            Some(error) => Err(GpuError::Wgpu {
                operation,
                message: error.to_string(),
            }),
        }
    }
}
