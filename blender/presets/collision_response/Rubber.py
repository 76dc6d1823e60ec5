# Collision Response preset "Rubber": elastic and global: springs back, the whole body gives way.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.0
settings.standoff = 0.05
settings.recovers = True
settings.profiles = {
    "absorption": [0.2, 0.5, 0.6, 0.6],
    "response_time": [0.04],
    "time_to_rest": [0.35],
    "damping_ratio": [1.0],
    "overshoot_period": [0.5],
    "yield_limit": [1.0],
}
