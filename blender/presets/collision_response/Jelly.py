# Collision Response preset "Jelly": elastic and global, and it wobbles after a press or a hit.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.1
settings.standoff = 0.0
settings.recovers = True
settings.profiles = {
    "absorption": [0.2, 0.5, 0.5, 0.6],
    "response_time": [0.02],
    "time_to_rest": [0.25],
    "damping_ratio": [0.12, 0.15, 0.3, 1.0],
    "overshoot_period": [0.35, 0.3, 0.25, 0.2],
    "yield_limit": [1.0],
}
