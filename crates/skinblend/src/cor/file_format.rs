//! The binary format of saved centers of rotation (see the `cor` module docs).

use glam::Vec3;

use super::centers::check_rotation_centers;
use crate::error::SkinError;

/// The version [`encode_rotation_centers`] writes and [`decode_rotation_centers`] reads.
pub const COR_FORMAT_VERSION: u32 = 1;

/// The first eight bytes of the saved centers.
const MAGIC: [u8; 8] = *b"SKBLCOR\0";
/// Magic, version and vertex count.
const HEADER_BYTES: usize = 8 + 4 + 8;
/// The trailing FNV-1a 64 checksum.
const CHECKSUM_BYTES: usize = 8;

/// FNV-1a, 64 bits: a checksum against truncation and corruption, not against tampering.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Saves per-vertex centers in the format of the module docs (`28 + 12 · len` bytes). The
/// `f32` bits are written as they are, so [`decode_rotation_centers`] returns them exactly.
///
/// # Errors
/// [`SkinError::NonFiniteAttribute`] for a center that is neither finite nor
/// [`NO_ROTATION_CENTER`](super::NO_ROTATION_CENTER) (an infinity, or NaN in only some components).
pub fn encode_rotation_centers(centers: &[Vec3]) -> Result<Vec<u8>, SkinError> {
    check_rotation_centers(centers, centers.len())?;
    let mut bytes = Vec::with_capacity(HEADER_BYTES + 12 * centers.len() + CHECKSUM_BYTES);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&COR_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(centers.len() as u64).to_le_bytes());
    for c in centers {
        for x in c.to_array() {
            bytes.extend_from_slice(&x.to_bits().to_le_bytes());
        }
    }
    let checksum = fnv1a_64(&bytes);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    Ok(bytes)
}

/// Loads centers saved by [`encode_rotation_centers`], bit for bit.
///
/// # Errors
/// [`SkinError::CorDataMagic`] when the bytes do not start with the magic,
/// [`SkinError::CorDataVersion`] for another version, [`SkinError::CorDataLength`] when the
/// length does not match the header's vertex count (or there is no whole header),
/// [`SkinError::CorDataChecksum`] when the checksum does not match, and
/// [`SkinError::NonFiniteAttribute`] for a stored center that is neither finite nor
/// [`NO_ROTATION_CENTER`](super::NO_ROTATION_CENTER).
pub fn decode_rotation_centers(bytes: &[u8]) -> Result<Vec<Vec3>, SkinError> {
    let minimum = HEADER_BYTES + CHECKSUM_BYTES;
    let too_short = || SkinError::CorDataLength {
        expected: minimum,
        found: bytes.len(),
    };
    let magic = bytes.get(..MAGIC.len()).ok_or_else(too_short)?;
    if magic != MAGIC {
        let mut found = [0; 8];
        found.copy_from_slice(magic);
        return Err(SkinError::CorDataMagic { found });
    }
    let version = read_u32(bytes, 8).ok_or_else(too_short)?;
    if version != COR_FORMAT_VERSION {
        return Err(SkinError::CorDataVersion {
            found: version,
            supported: COR_FORMAT_VERSION,
        });
    }
    let count = read_u64(bytes, 12).ok_or_else(too_short)?;
    let expected = usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(12))
        .and_then(|n| n.checked_add(minimum))
        .unwrap_or(usize::MAX);
    if bytes.len() != expected {
        return Err(SkinError::CorDataLength {
            expected,
            found: bytes.len(),
        });
    }
    let body = bytes.len() - CHECKSUM_BYTES;
    let stored = read_u64(bytes, body).ok_or_else(too_short)?;
    let computed = fnv1a_64(&bytes[..body]);
    if stored != computed {
        return Err(SkinError::CorDataChecksum { stored, computed });
    }
    let centers: Vec<Vec3> = bytes[HEADER_BYTES..body]
        .chunks_exact(12)
        .map(|c| {
            let f =
                |i: usize| f32::from_bits(u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]));
            Vec3::new(f(0), f(4), f(8))
        })
        .collect();
    check_rotation_centers(&centers, centers.len())?;
    Ok(centers)
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let b = bytes.get(at..at + 8)?;
    let mut a = [0; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}
