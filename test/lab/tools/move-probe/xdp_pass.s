	.text
	.section	xdp,"ax",@progbits
	.globl	xdp_pass
	.type	xdp_pass,@function
xdp_pass:
	r0 = 2
	exit
.Lfunc_end0:
	.size	xdp_pass, .Lfunc_end0-xdp_pass
	.section	license,"aw",@progbits
	.globl	_license
_license:
	.asciz	"GPL"
	.size	_license, 4
