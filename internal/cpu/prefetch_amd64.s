#include "textflag.h"

// func Prefetch(p unsafe.Pointer)
TEXT ·Prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	p+0(FP), AX
	PREFETCHT0	(AX)
	RET

// func PrefetchRange(p unsafe.Pointer, n uintptr) (lines int)
TEXT ·PrefetchRange(SB), NOSPLIT|NOFRAME, $0-24
	MOVQ	p+0(FP), AX
	MOVQ	n+8(FP), CX
	XORQ	DX, DX
	TESTQ	CX, CX
	JZ	done
	LEAQ	-1(AX)(CX*1), CX // the last byte
	ANDQ	$-64, AX         // the first byte's line
loop:
	PREFETCHT0	(AX)
	INCQ	DX
	ADDQ	$64, AX
	CMPQ	AX, CX
	JLS	loop             // while the line starts at or before the last byte
done:
	MOVQ	DX, lines+16(FP)
	RET
