"""The refinement and skinning network of issue 5 (HumanRig's mesh–skeleton mutual attention network, sized for a CPU):
surface points plus coarse joints in, refined joints and dense skinning weights out.

Modules: skeleton (the 23 template joints), geometry (farthest-point order, kNN, gathers), model (the network),
dataset (samples → batches, coarse-joint noise), losses, export (ONNX + check file), card (model card).
"""
