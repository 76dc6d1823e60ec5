# Collision Response preset "Stiff Shell": elastic and global, fast: gives way as a whole and snaps back.
import bpy

settings = bpy.context.object.collision_response
settings.friction = 0.0
settings.standoff = 0.0
settings.recovers = True
settings.profiles = {
    "absorption": [0.9, 0.8, 0.4, 0.1],
    "response_time": [0.0],
    "time_to_rest": [0.12],
    "damping_ratio": [1.0],
    "overshoot_period": [0.5],
    "yield_limit": [1.0],
}
