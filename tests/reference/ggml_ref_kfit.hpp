// GGML block formats, CPU reference: the scale searches of ggml's K-quant reference quantizers,
// in float arithmetic with ggml's order of operations (make_qx_quants for q6_K, make_q3_quants for
// q3_K, make_qkx2_quants for q2_K, q4_K and q5_K).
#pragma once

#include "ggml_ref_types.hpp"

namespace ref::ggml::detail {

inline constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below it a group is zero

// Largest |x|, and the signed value that has it (the first one on ties).
inline void extreme(const float* x, int n, float* amax, float* max) {
  *amax = 0.0f;
  *max = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > *amax) {
      *amax = ax;
      *max = x[i];
    }
  }
}

// The signed extreme value of a symmetric group, or 0 after zeroing L when the group is zero.
inline float extreme_or_zero(const float* x, int n, int8_t* L) {
  float amax, max;
  extreme(x, n, &amax, &max);
  if (amax >= kGroupMaxEps) return max;
  for (int i = 0; i < n; ++i) L[i] = 0;
  return 0.0f;
}

// Symmetric levels l in [-nmax, nmax - 1] weighted by x^2 (ggml's rmse_type 1, no importance
// weights): start from the scale that maps the extreme value to -nmax, then try 18 nearby scales
// and keep the one with the best weighted least-squares fit. L receives l + nmax.
inline float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  const float max = extreme_or_zero(x, n, L);
  if (max == 0.0f) return 0.0f;
  auto level = [&](float iscale, int i) {
    return clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
  };
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale, i);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// q3_K's fit: levels in [-nmax, nmax - 1] from the extreme-value scale, then up to five sweeps
// that move single levels to their best value while the x^2-weighted fit improves. L receives
// l + nmax.
inline float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  const float max = extreme_or_zero(x, n, L);
  if (max == 0.0f) return 0.0f;
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int sweep = 0; sweep < 5; ++sweep) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;
      if (slx > 0.0f) {
        float sl2 = suml2 - w * li * li;
        const int nl = clamp_int(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (nl != L[i]) {
          slx += w * x[i] * static_cast<float>(nl);
          sl2 += w * static_cast<float>(nl) * static_cast<float>(nl);
          if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(nl);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Affine levels l in [0, nmax] with x ~ scale * l - the_min (the_min >= 0): start from the
// min/max mapping, then try nstep + 1 level spacings (rmin + rdelta * is + nmax over the range),
// solve the weighted least-squares scale and offset for each (offset capped at 0) and keep the
// one with the smallest weighted error (absolute error when use_mad, else squared).
inline float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                              float* the_min, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0.0f) min = 0.0f;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.0f;
  }
  auto error_of = [&](float s, float m, const uint8_t* levels) {
    float err = 0.0f;
    for (int i = 0; i < n; ++i) {
      float diff = s * static_cast<float>(levels[i]) + m - x[i];
      diff = use_mad ? std::fabs(diff) : diff * diff;
      err += weights[i] * diff;
    }
    return err;
  };
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax));
  }
  float best_error = error_of(scale, min, L);
  uint8_t Laux[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0.0f) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0.0f) {
        this_min = 0.0f;
        this_scale = sum_xl / sum_l2;
      }
      const float cur_error = error_of(this_scale, this_min, Laux);
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

}  // namespace ref::ggml::detail
