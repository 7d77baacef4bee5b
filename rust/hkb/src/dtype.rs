//! Host representations of kernel arguments and buffer elements.
//!
//! The reduced-precision types are bit containers with the byte layout candle's kernels take by
//! value (`__half`, `__nv_bfloat16`: 2 bytes; `__nv_fp8_e4m3`: 1 byte). Conversions to and from
//! `f32` round to nearest, ties to even; `F8E4M3` is the OCP E4M3 format (bias 7, no infinity,
//! NaN `0x7F`/`0xFF`) and saturates out-of-range values and infinities to +-448, as candle's
//! conversions do.

/// A value a kernel takes by value: its bytes are exactly the kernel parameter's bytes.
///
/// # Safety
/// `Self` must have the size and representation of the C parameter type it stands for, no padding
/// bytes, and no references to host memory.
pub unsafe trait DeviceRepr: Copy + 'static {}

/// A type that can live in device memory and be copied back: every bit pattern of its size is a
/// valid value, so reading whatever a kernel wrote is sound (`bool` is therefore excluded).
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self`, with no padding.
pub unsafe trait DeviceCopy: DeviceRepr {}

macro_rules! device_types {
    ($($t:ty),*) => { $(unsafe impl DeviceRepr for $t {} unsafe impl DeviceCopy for $t {})* };
}
device_types!(u8, u16, u32, u64, usize, i16, i32, i64, f32, f64, F16, Bf16, F8E4M3);
unsafe impl DeviceRepr for bool {}
unsafe impl DeviceRepr for DevicePtr {}

/// A device address as a kernel argument (`const T*`/`T*` parameters, 8 bytes).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The null pointer: candle passes it as `info` for contiguous layouts.
    pub const NULL: DevicePtr = DevicePtr(0);
}

/// IEEE binary16, as the bits candle passes for `__half`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F16(pub u16);

/// bfloat16, as the bits candle passes for `__nv_bfloat16`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bf16(pub u16);

/// OCP FP8 E4M3, as the bits candle passes for `__nv_fp8_e4m3`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F8E4M3(pub u8);

/// Magnitude bits of `abs_bits` (an f32 with the sign cleared, not NaN) in a binary format with
/// `man` mantissa bits and exponent bias `bias`, rounded to nearest even. Values past the largest
/// finite number come out with an all-ones-or-larger exponent field; callers clamp.
fn round_from_f32(abs_bits: u32, man: u32, bias: u32) -> u32 {
    let exp = abs_bits >> 23;
    let frac = abs_bits & 0x7F_FFFF;
    let (kept, rest, half) = if exp + bias > 127 {
        // Normal in the target: re-bias the exponent, drop 23 - man fraction bits.
        let drop = 23 - man;
        let kept = ((exp + bias - 127) << man) | (frac >> drop);
        (kept, frac & ((1 << drop) - 1), 1u32 << (drop - 1))
    } else {
        // Subnormal in the target: count units of 2^(1 - bias - man) in the f32's value.
        let mant = if exp == 0 { frac } else { frac | 0x80_0000 };
        let shift = 151 - bias - man - exp.max(1);
        if shift > 24 {
            return 0; // below half the smallest subnormal
        }
        (
            mant >> shift,
            mant & ((1 << shift) - 1),
            1u32 << (shift - 1),
        )
    };
    if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

/// The f32 value of magnitude bits in a binary format with `man` mantissa bits and bias `bias`
/// (finite values only).
fn widen_to_f32(mag: u32, man: u32, bias: i32) -> f32 {
    let exp = (mag >> man) as i32;
    let frac = mag & ((1 << man) - 1);
    if exp == 0 {
        frac as f32 * 2f32.powi(1 - bias - man as i32)
    } else {
        f32::from_bits((((exp - bias + 127) as u32) << 23) | (frac << (23 - man)))
    }
}

impl F16 {
    /// The value with these IEEE half-precision bits.
    pub const fn from_bits(bits: u16) -> Self {
        F16(bits)
    }
    /// The IEEE half-precision bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }
    /// The nearest half-precision value (round to nearest even).
    pub fn from_f32(x: f32) -> Self {
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let abs = bits & 0x7FFF_FFFF;
        if abs > 0x7F80_0000 {
            return F16(sign | 0x7E00);
        }
        F16(sign | round_from_f32(abs, 10, 15).min(0x7C00) as u16)
    }
    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x8000 != 0 { -1.0 } else { 1.0 };
        let mag = u32::from(self.0 & 0x7FFF);
        if mag >= 0x7C00 {
            let frac = mag & 0x3FF;
            return sign * if frac == 0 { f32::INFINITY } else { f32::NAN };
        }
        sign * widen_to_f32(mag, 10, 15)
    }
}

impl Bf16 {
    /// The value with these bfloat16 bits.
    pub const fn from_bits(bits: u16) -> Self {
        Bf16(bits)
    }
    /// The bfloat16 bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }
    /// The nearest bfloat16 value (round to nearest even).
    pub fn from_f32(x: f32) -> Self {
        let bits = x.to_bits();
        if x.is_nan() {
            return Bf16(((bits >> 16) as u16) | 0x0040);
        }
        let round = 0x7FFF + ((bits >> 16) & 1);
        Bf16((bits.wrapping_add(round) >> 16) as u16)
    }
    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

impl F8E4M3 {
    /// The largest finite magnitude, 448.
    pub const MAX: F8E4M3 = F8E4M3(0x7E);

    /// The value with these FP8 E4M3 bits.
    pub const fn from_bits(bits: u8) -> Self {
        F8E4M3(bits)
    }
    /// The FP8 E4M3 bits.
    pub const fn to_bits(self) -> u8 {
        self.0
    }
    /// The nearest E4M3 value; finite values saturate at [`F8E4M3::MAX`], NaN stays NaN.
    pub fn from_f32(x: f32) -> Self {
        let bits = x.to_bits();
        let sign = ((bits >> 24) & 0x80) as u8;
        let abs = bits & 0x7FFF_FFFF;
        if abs > 0x7F80_0000 {
            return F8E4M3(sign | 0x7F);
        }
        F8E4M3(sign | round_from_f32(abs, 3, 7).min(0x7E) as u8)
    }
    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x80 != 0 { -1.0 } else { 1.0 };
        let mag = u32::from(self.0 & 0x7F);
        if mag == 0x7F {
            return f32::NAN;
        }
        sign * widen_to_f32(mag, 3, 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next_up(x: f32) -> f32 {
        f32::from_bits(x.to_bits() + 1) // positive finite x only
    }
    fn next_down(x: f32) -> f32 {
        f32::from_bits(x.to_bits() - 1) // positive non-zero x only
    }

    #[test]
    fn arg_sizes_are_the_c_sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<F16>(), 2);
        assert_eq!(size_of::<Bf16>(), 2);
        assert_eq!(size_of::<F8E4M3>(), 1);
        assert_eq!(size_of::<DevicePtr>(), 8);
        assert_eq!(size_of::<bool>(), 1);
    }

    #[test]
    fn f16_known_values() {
        assert_eq!(F16::from_f32(1.0).0, 0x3C00);
        assert_eq!(F16::from_f32(-2.0).0, 0xC000);
        assert_eq!(F16::from_f32(65504.0).0, 0x7BFF);
        assert_eq!(F16::from_f32(65519.99).0, 0x7BFF);
        assert_eq!(F16::from_f32(65520.0).0, 0x7C00); // tie with an odd max rounds to inf
        assert_eq!(F16::from_f32(f32::NEG_INFINITY).0, 0xFC00);
        assert_eq!(F16::from_f32(-0.0).0, 0x8000);
        assert_eq!(F16::from_f32(2f32.powi(-24)).0, 0x0001);
        assert_eq!(F16::from_f32(2f32.powi(-25)).0, 0x0000); // tie to even (zero)
        assert_eq!(F16::from_f32(next_up(2f32.powi(-25))).0, 0x0001);
        assert_eq!(F16::from_f32(1e-30).0, 0x0000);
        assert_eq!(F16::from_f32(f32::from_bits(1)).0, 0x0000); // f32 subnormal
        assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
        assert_eq!(F16(0x3555).to_f32(), 1365.0 / 4096.0);
    }

    #[test]
    fn f16_every_value_round_trips_and_every_midpoint_ties_to_even() {
        for bits in 0u16..=0xFFFF {
            let h = F16(bits);
            let x = h.to_f32();
            if bits & 0x7C00 == 0x7C00 && bits & 0x3FF != 0 {
                assert!(x.is_nan());
                assert!(F16::from_f32(x).to_f32().is_nan());
                continue;
            }
            assert_eq!(F16::from_f32(x).0, bits, "{bits:#06x} -> {x}");
            let mag = bits & 0x7FFF;
            if mag < 0x7BFF {
                // Between this value and the next larger magnitude.
                let lo = x.abs();
                let hi = F16(mag + 1).to_f32();
                let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32;
                let even = if mag & 1 == 0 { mag } else { mag + 1 };
                let sign = bits & 0x8000;
                let s = if sign != 0 { -1.0 } else { 1.0 };
                assert_eq!(F16::from_f32(s * mid).0, sign | even, "mid of {mag:#06x}");
                assert_eq!(F16::from_f32(s * next_down(mid)).0, sign | mag);
                assert_eq!(F16::from_f32(s * next_up(mid)).0, sign | (mag + 1));
            }
        }
    }

    #[test]
    fn bf16_round_trips_and_rounds_to_even() {
        for bits in 0u16..=0xFFFF {
            let x = Bf16(bits).to_f32();
            if x.is_nan() {
                assert!(Bf16::from_f32(x).to_f32().is_nan());
                continue;
            }
            assert_eq!(Bf16::from_f32(x).0, bits);
        }
        // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7.
        assert_eq!(Bf16::from_f32(1.0 + 2f32.powi(-8)).0, 0x3F80);
        assert_eq!(Bf16::from_f32(1.0 + 3.0 * 2f32.powi(-8)).0, 0x3F82);
        assert_eq!(Bf16::from_f32(next_up(1.0 + 2f32.powi(-8))).0, 0x3F81);
        assert_eq!(Bf16::from_f32(f32::MAX).0, 0x7F80); // rounds up to inf
        assert_eq!(Bf16::from_f32(-f32::NAN).0 & 0x8000, 0x8000);
    }

    #[test]
    fn f8e4m3_values_saturation_and_rounding() {
        assert_eq!(F8E4M3(0x7E).to_f32(), 448.0);
        assert_eq!(F8E4M3(0x01).to_f32(), 2f32.powi(-9));
        assert_eq!(F8E4M3(0x08).to_f32(), 2f32.powi(-6));
        assert_eq!(F8E4M3(0x38).to_f32(), 1.0);
        assert!(F8E4M3(0x7F).to_f32().is_nan());
        assert!(F8E4M3(0xFF).to_f32().is_nan());
        assert_eq!(F8E4M3::from_f32(448.0).0, 0x7E);
        assert_eq!(F8E4M3::from_f32(464.0).0, 0x7E); // tie: 448's mantissa is the even one
        assert_eq!(F8E4M3::from_f32(472.0).0, 0x7E); // rounds to the NaN code, saturates
        assert_eq!(F8E4M3::from_f32(1e9).0, 0x7E);
        assert_eq!(F8E4M3::from_f32(f32::INFINITY).0, 0x7E);
        assert_eq!(F8E4M3::from_f32(f32::NEG_INFINITY).0, 0xFE);
        assert_eq!(F8E4M3::from_f32(-500.0).0, 0xFE);
        assert_eq!(F8E4M3::from_f32(f32::NAN).0 & 0x7F, 0x7F);
        assert_eq!(F8E4M3::from_f32(1.0625).0, 0x38); // halfway 1 and 1.125: even is 1
        assert_eq!(F8E4M3::from_f32(1.1875).0, 0x3A); // halfway 1.125 and 1.25: even is 1.25
        assert_eq!(F8E4M3::from_f32(2f32.powi(-10)).0, 0x00); // half the smallest subnormal
        assert_eq!(F8E4M3::from_f32(3.0 * 2f32.powi(-10)).0, 0x02);
        assert_eq!(F8E4M3::from_f32(-0.0).0, 0x80);
        for bits in 0u8..=0xFF {
            let x = F8E4M3(bits).to_f32();
            if bits & 0x7F == 0x7F {
                continue;
            }
            assert_eq!(F8E4M3::from_f32(x).0, bits, "{bits:#04x} -> {x}");
        }
    }
}
