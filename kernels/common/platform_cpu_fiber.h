// The CPU platform's fiber switch (platform_cpu.h runs every GPU thread as a fiber): x86-64
// assembly by default; the C library's ucontext on other hosts (aarch64 ...) and wherever
// -DHKB_CPU_FIBER_UCONTEXT asks for it (CMake: -DHKB_CPU_UCONTEXT=ON), so that the portable path
// is tested on x86-64 too. ucontext saves the signal mask at every switch (a system call): slower.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) && !defined(HKB_CPU_FIBER_UCONTEXT)
#define HKB_CPU_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

namespace hkb_cpu {

#if defined(HKB_CPU_FIBER_ASM)

struct FiberContext {
  void* sp;
};

extern "C" void hkb_cpu_swap(void** save_sp, void* next_sp);
extern "C" void hkb_cpu_fiber_start();

// Callee-saved registers and the FP control words are saved on the stack; the stack pointer in
// *save_sp. A new fiber's frame returns into hkb_cpu_fiber_start, which calls the entry in %r12.
asm(R"(
  .text
  .globl hkb_cpu_swap
  .hidden hkb_cpu_swap
  .type hkb_cpu_swap,@function
hkb_cpu_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size hkb_cpu_swap, .-hkb_cpu_swap
  .globl hkb_cpu_fiber_start
  .hidden hkb_cpu_fiber_start
  .type hkb_cpu_fiber_start,@function
hkb_cpu_fiber_start:
  call *%r12
  ud2
  .size hkb_cpu_fiber_start, .-hkb_cpu_fiber_start
)");

inline void fiber_switch(FiberContext* save, const FiberContext* next) {
  hkb_cpu_swap(&save->sp, next->sp);
}

// A fiber that runs `entry` (which never returns) on the stack [lo, lo + bytes).
inline void fiber_make(FiberContext* c, char* lo, size_t bytes, void (*entry)()) {
  uint64_t* frame = reinterpret_cast<uint64_t*>(lo + bytes) - 8;
  frame[0] = 0x037F00001F80ull;  // MXCSR default, x87 control word default
  for (int r = 1; r < 7; ++r) frame[r] = 0;
  frame[4] = reinterpret_cast<uint64_t>(entry);  // popped into %r12
  frame[7] = reinterpret_cast<uint64_t>(&hkb_cpu_fiber_start);
  c->sp = frame;
}

#else

struct FiberContext {
  ucontext_t uc;
};

inline void fiber_switch(FiberContext* save, const FiberContext* next) {
  if (swapcontext(&save->uc, &next->uc) != 0) __builtin_trap();
}

inline void fiber_make(FiberContext* c, char* lo, size_t bytes, void (*entry)()) {
  if (getcontext(&c->uc) != 0) __builtin_trap();
  c->uc.uc_stack.ss_sp = lo;
  c->uc.uc_stack.ss_size = bytes;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, entry, 0);
}

#endif

}  // namespace hkb_cpu
